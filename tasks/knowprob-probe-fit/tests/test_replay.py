"""Replays of the reference probe (fixtures/probe_runs.json, written by generators/probe_runs.py).

"fits": the records the reference _fit_regression returned, layer by layer, on feature and
target arrays that tests/probe_data.py rebuilds from each case's spec; the implementation in the
workspace gets the same arrays.

"pipelines": the records of the reference's whole leave-one-relation-group-out evaluation on a
probing-results frame (each group in turn is the test set, the other groups the training set,
both balanced with the visible undersample_dataset, one probe per layer). Here the evaluation is
driven by a probe of ours in the candidate process, which calls the workspace's
get_features_and_targets_for_dataset and _fit_regression in the same way, so the records check
both targets together on realistic frames.

Success rates must agree within 1e-9 (they are fractions of the test rows), everything else
exactly; the recorded records never leave this process.
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from lmr_bridge import candidate, probe

from probe_data import activation_frame, flags, probe_arrays

RUNS = json.loads((Path(__file__).resolve().parent / "../fixtures/probe_runs.json").read_text())
FITS = RUNS["fits"]
PIPELINES = RUNS["pipelines"]

fit_regression = candidate.function("src.classification.classifier:_fit_regression")

KEYS = {"layer", "relation_group_id", "success_rate", "nb_test_examples", "nb_train_examples"}
_isclose = math.isclose
_integer = (int, np.integer)


def check_record(expected, actual, where):
    assert isinstance(actual, dict), "%s: expected a dict, got %r" % (where, actual)
    assert set(actual) == KEYS, "%s: expected the keys %s, got %s" % (where, sorted(KEYS), sorted(actual))
    group = actual["relation_group_id"]
    assert group == expected["relation_group_id"] and isinstance(group, str) == isinstance(
        expected["relation_group_id"], str), "%s: relation_group_id %r, expected %r" % (where, group, expected["relation_group_id"])
    for key in ("layer", "nb_test_examples", "nb_train_examples"):
        want, got = expected[key], actual[key]
        if want is None:
            assert got is None, "%s %s: expected None, got %r" % (where, key, got)
        else:
            assert isinstance(got, _integer) and not isinstance(got, (bool, np.bool_)), "%s %s: %r" % (where, key, got)
            assert int(got) == want, "%s %s: expected %r, got %r" % (where, key, want, got)
    want, got = expected["success_rate"], actual["success_rate"]
    if want is None:
        assert got is None, "%s success_rate: expected None, got %r" % (where, got)
    else:
        assert got is not None and _isclose(float(got), want, rel_tol=0.0, abs_tol=1e-9), (
            "%s success_rate: expected %r, got %r" % (where, want, got))


@pytest.mark.parametrize("case", FITS, ids=[c["name"] for c in FITS])
def test_fit_matches_the_reference(case):
    train_x, train_y, test_x, test_y = probe_arrays(**case["arrays"])
    for layer, expected in enumerate(case["records"]):
        record = fit_regression(train_x, train_y, test_x, test_y, layer, case["relation_group_id"])
        check_record(expected, record, "layer %d" % layer)


@probe
def leave_one_group_out(frame, position, include):
    """In the candidate: every relation group in turn is probed by models trained on the others."""
    import pandas as pd

    from src.classification.classifier import _fit_regression
    from src.classification.data import get_features_and_targets_for_dataset, undersample_dataset

    encoder = {"CK": 0, "PK": 1}
    records = []
    for group in pd.unique(frame["relation_group_id"]):
        held_out = (frame["relation_group_id"] == group).to_numpy()
        arrays = []
        for rows in (frame[~held_out], frame[held_out]):
            arrays.extend(get_features_and_targets_for_dataset(
                dataset=undersample_dataset(rows), vertical=True, position=position, label_encoder=encoder, **include))
        train_x, train_y, test_x, test_y = arrays
        records.extend(_fit_regression(train_x, train_y, test_x, test_y, layer, group)
                       for layer in range(train_x.shape[1]))
    return records


@pytest.mark.parametrize("case", PIPELINES, ids=[c["name"] for c in PIPELINES])
def test_evaluation_matches_the_reference(case):
    frame = activation_frame(**case["frame"])
    records = leave_one_group_out(frame, case["position"], flags(*case["modules"]))
    expected = case["records"]
    assert len(records) == len(expected), "expected %d records, got %d" % (len(expected), len(records))
    for i, (want, got) in enumerate(zip(expected, records)):
        check_record(want, got, "record %d (group %r, layer %r)" % (i, want["relation_group_id"], want["layer"]))
