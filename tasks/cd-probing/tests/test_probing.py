"""Tests for probing (main.py): one logistic-regression (or random-forest) probe per layer.

probing receives what main.py collected, per layer, for the two groups of questions: the
first group's hidden states (label 0) and the second group's (label 1). For every layer it
fits a probe on a 60/40 split and scores the held-out part: accuracy, F1 of label 1 and
ROC AUC. The hidden states here are seeded Gaussian clouds (tests/hidden_states.py) in the
layout main.py builds: one float32 array (questions, hidden size) per layer.

main.py is imported only in the candidate process (lmr_bridge): the hidden states are made
here and sent there, the probe below calls probing on them and sends back its result, and
every check is decided here.
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from lmr_bridge import probe

from hidden_states import main_args, make_hidden_states

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_isclose = math.isclose


@probe
def probed(first, second, n_layers, clf):
    """In the candidate: probing on the given hidden states, with main.py's namespace for `clf`."""
    from main import probing

    return probing(first, second, n_layers, main_args(clf), [], [], [])


@probe
def probing_raises(first, second, n_layers, clf):
    """In the candidate: the classes (most derived first) of what probing raised, or None.

    The exception is caught there because the bridge cannot bring an ImportError back: the
    candidate takes any ImportError for a failed import of the workspace (lmr_bridge's
    server.py, _is_import_failure), and the test would see a CandidateImportError instead.
    So this check rests on the candidate's report."""
    from main import probing

    try:
        probing(first, second, n_layers, main_args(clf), [], [], [])
    except Exception as e:
        return [c.__name__ for c in type(e).__mro__]
    return None


def run(first, second, clf="LR", n_layers=None):
    n_layers = len(first) if n_layers is None else n_layers
    result = probed(first, second, n_layers, clf)
    assert isinstance(result, tuple) and len(result) == 3, "probing returns (accuracies, F1 scores, AUCs)"
    return [[float(v) for v in scores] for scores in result]


def load_cases():
    return json.loads((FIXTURES / "probe_scores.json").read_text())["cases"]


CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"seed{c['seed']}-{c['clf']}-{c['layers']}layers" for c in CASES])
def test_matches_recorded_scores(case):
    first, second = make_hidden_states(case["seed"], case["layers"], case["first"], case["second"], case["dim"], case["separation"])
    acc, f1, auc = run(first, second, case["clf"])
    for name, got, want in (("accuracy", acc, case["acc"]), ("F1", f1, case["f1"]), ("AUC", auc, case["auc"])):
        want = [float(v) for v in want]
        assert len(got) == len(want), f"{name}: one score per layer"
        for layer, (g, w) in enumerate(zip(got, want)):
            assert _isclose(g, w, rel_tol=1e-9, abs_tol=1e-9), f"{name} of layer {layer}: {g} != {w}"


def test_one_score_of_each_kind_per_layer_in_unit_interval():
    first, second = make_hidden_states(11, 7, 30, 30, 10, 3.0)
    for scores in run(first, second):
        assert len(scores) == 7
        assert all(0.0 <= s <= 1.0 for s in scores)


def test_separable_layer_scores_perfectly():
    rng = np.random.default_rng(5)
    first = [(rng.standard_normal((40, 6)) * 0.1 - 3.0).astype(np.float32)]
    second = [(rng.standard_normal((40, 6)) * 0.1 + 3.0).astype(np.float32)]
    for clf in ("LR", "RF"):
        acc, f1, auc = run(first, second, clf)
        assert (acc, f1, auc) == ([1.0], [1.0], [1.0]), clf


def test_identical_hidden_states_give_chance_auc():
    # e.g. a layer whose last-token state is the same for every question
    first = [np.full((30, 8), 0.25, dtype=np.float32)]
    second = [np.full((30, 8), 0.25, dtype=np.float32)]
    _, _, auc = run(first, second)
    assert auc == [0.5]


def test_layers_are_probed_independently_and_in_order():
    first, second = make_hidden_states(21, 5, 35, 35, 12, 3.5)
    forward = run(first, second)
    backward = run(first[::-1], second[::-1])
    for a, b in zip(forward, backward):
        assert a == b[::-1]


def oracle_f1(first, second, pos_label=1):
    """F1 by an independent pipeline: the split, probe and labels the instruction states."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.model_selection import train_test_split

    X = np.concatenate([first, second])
    y = np.concatenate([np.zeros(len(first)), np.ones(len(second))])
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.4, random_state=42)
    pred = LogisticRegression(penalty="l2").fit(X_tr, y_tr).predict(X_te)
    return float(f1_score(y_te, pred, pos_label=pos_label))


def test_f1_is_that_of_the_second_group():
    # unbalanced groups, so the F1 of one label differs from that of the other
    first, second = make_hidden_states(8, 1, 45, 15, 6, 1.2)
    _, f1, _ = run(first, second)
    assert _isclose(f1[0], oracle_f1(first[0], second[0]), rel_tol=1e-9, abs_tol=1e-12)
    assert not _isclose(f1[0], oracle_f1(first[0], second[0], pos_label=0), rel_tol=1e-6)


def test_unknown_classifier_raises_import_error():
    first, second = make_hidden_states(3, 2, 20, 20, 4, 1.0)
    raised = probing_raises(first, second, 2, "SVM")
    assert raised is not None and "ImportError" in raised, f"probing raised {raised}, not an ImportError"
