"""Replays of the reference perform_classification_by_relation_group (src/classification/classifier.py).

fixtures/classification_runs.json (written by generators/classification_runs.py) holds, for
each case, the spec of a probing-results frame, the module and token position probed, and
the records the reference returned. tests/probing_frames.py rebuilds the frame from the spec
(seeded: the same activations on every machine); the test calls the implementation in the
workspace on it and compares its records with the reference's, in order: success rates
within 1e-9 (they are fractions of the test examples), everything else exactly. The
contract fixes what decides these numbers (balancing with undersample_dataset, the
scikit-learn logistic regression of _fit_regression, one probe per layer).

The code under test runs in the candidate process (lmr_bridge): the frame is built here and
goes there as a pandas frame, the records come back as plain data, and the recorded records,
which never leave this process, decide the test here.
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from lmr_bridge import candidate

from probing_frames import flags, probing_results

_isclose = math.isclose
_integer = (int, np.integer)

CASES = json.loads((Path(__file__).resolve().parent / "../fixtures/classification_runs.json").read_text())["cases"]

perform_classification_by_relation_group = candidate.function(
    "src.classification.classifier:perform_classification_by_relation_group"
)

KEYS = {"layer", "relation_group_id", "success_rate", "nb_test_examples", "nb_train_examples"}


def check_integer(expected, actual, what):
    if expected is None:
        assert actual is None, "%s: expected None, got %r" % (what, actual)
    else:
        assert isinstance(actual, _integer) and not isinstance(actual, (bool, np.bool_)), (
            "%s: expected the integer %r, got %r" % (what, expected, actual))
        assert int(actual) == expected, "%s: expected %r, got %r" % (what, expected, actual)


def check_record(expected, actual, where):
    assert isinstance(actual, dict), "%s: expected a dict, got %r" % (where, actual)
    assert set(actual) == KEYS, "%s: expected the keys %s, got %s" % (where, sorted(KEYS), sorted(actual))
    g = expected["relation_group_id"]
    if isinstance(g, str):
        assert isinstance(actual["relation_group_id"], str) and actual["relation_group_id"] == g, (
            "%s relation_group_id: expected %r, got %r" % (where, g, actual["relation_group_id"]))
    else:
        check_integer(g, actual["relation_group_id"], where + " relation_group_id")
    for key in ("layer", "nb_test_examples", "nb_train_examples"):
        check_integer(expected[key], actual[key], "%s %s" % (where, key))
    rate = expected["success_rate"]
    if rate is None:
        assert actual["success_rate"] is None, "%s success_rate: expected None, got %r" % (where, actual["success_rate"])
    else:
        got = actual["success_rate"]
        assert got is not None and _isclose(float(got), rate, rel_tol=0.0, abs_tol=1e-9), (
            "%s success_rate: expected %r, got %r" % (where, rate, got))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_the_reference_records(case):
    frame = probing_results(**case["frame"])
    records = perform_classification_by_relation_group(
        frame, vertical=True, position=case["position"], **flags(case["module"])
    )
    records = list(records)
    expected = case["records"]
    assert len(records) == len(expected), "expected %d records, got %d" % (len(expected), len(records))
    for i, (e, a) in enumerate(zip(expected, records)):
        check_record(e, a, "record %d (group %r, layer %r)" % (i, e["relation_group_id"], e["layer"]))
