"""Property tests for _fit_regression (src/classification/classifier.py): one layer's probe.

The probe of a layer is a linear classifier fitted on that layer's features of the training
set and scored, as the share of test rows it classifies right, on that layer's features of the
test set. These tests build the arrays here (tests/probe_data.py), send them to the code under
test (lmr_bridge), and decide from the arrays alone: activations that separate the two sources
score 1, a direction reversed in the test set scores 0, a layer whose vector is the same in
every row scores exactly one half on a balanced test set, only the requested layer is read, the
record holds what it must, and the success rates agree with the contract's logistic regression
fitted here, in the oracle.
"""
import math

import numpy as np
import pytest
from lmr_bridge import candidate
from sklearn.linear_model import LogisticRegression

from probe_data import probe_arrays

fit_regression = candidate.function("src.classification.classifier:_fit_regression")

_isclose = math.isclose
KEYS = {"layer", "relation_group_id", "success_rate", "nb_test_examples", "nb_train_examples"}
_integer = (int, np.integer)


def fit(arrays, layer, group="religion"):
    train_x, train_y, test_x, test_y = arrays
    return fit_regression(train_x, train_y, test_x, test_y, layer, group)


def rate(record):
    value = record["success_rate"]
    assert isinstance(value, (float, np.floating)) and not isinstance(value, bool), value
    return float(value)


def oracle_rate(arrays, layer):
    """The contract's probe, fitted here: scikit-learn's logistic regression with max_iter=10000."""
    train_x, train_y, test_x, test_y = arrays
    model = LogisticRegression(max_iter=10000).fit(np.asarray(train_x[:, layer, 0, :], np.float64), train_y)
    hits = model.predict(np.asarray(test_x[:, layer, 0, :], np.float64)) == test_y
    return float(np.count_nonzero(hits)) / len(test_y)


def test_record_layout():
    arrays = probe_arrays(seed=41, train=(14, 9), test=(5, 4), n_layers=3, width=12, signal=[1.0, 2.0, 3.0])
    for layer, group in ((0, "religion"), (2, 5), (1, "geographic-geopolitic-language")):
        record = fit(arrays, layer, group)
        assert isinstance(record, dict) and set(record) == KEYS, record
        assert isinstance(record["layer"], _integer) and int(record["layer"]) == layer
        assert record["relation_group_id"] == group and type(record["relation_group_id"]) is type(group)
        for key, n in (("nb_test_examples", 9), ("nb_train_examples", 23)):
            assert isinstance(record[key], _integer) and not isinstance(record[key], bool), record
            assert int(record[key]) == n, (key, record)
        assert 0.0 <= rate(record) <= 1.0


def test_separable_layer_scores_one():
    arrays = probe_arrays(seed=42, train=(20, 20), test=(9, 9), n_layers=3, width=12, signal=[40.0, 40.0, 40.0])
    for layer in range(3):
        assert rate(fit(arrays, layer)) == 1.0


def test_direction_reversed_in_the_test_set_scores_zero():
    arrays = probe_arrays(seed=43, train=(16, 16), test=(6, 7), n_layers=2, width=12, signal=[40.0, 40.0],
                          flip_test=True)
    for layer in range(2):
        assert rate(fit(arrays, layer, 3)) == 0.0


def test_identical_vectors_score_exactly_one_half_on_a_balanced_test_set():
    arrays = probe_arrays(seed=44, train=(12, 12), test=(8, 8), n_layers=2, width=12, signal=[0.0, 0.0],
                          constant_layers=[0, 1])
    for layer in range(2):
        assert rate(fit(arrays, layer)) == 0.5


@pytest.mark.parametrize("layer", [0, 1, 2, 3])
def test_only_the_requested_layer_is_read(layer):
    # the requested layer separates the sources; every other layer holds one vector for all rows
    others = [l for l in range(4) if l != layer]
    arrays = probe_arrays(seed=45 + layer, train=(15, 15), test=(6, 6), n_layers=4, width=12,
                          signal=[40.0 if l == layer else 0.0 for l in range(4)], constant_layers=others)
    assert rate(fit(arrays, layer)) == 1.0
    for other in others:
        assert rate(fit(arrays, other)) == 0.5


@pytest.mark.parametrize("test_counts", [(0, 1), (1, 0), (2, 1), (4, 3)])
def test_small_and_unbalanced_test_sets(test_counts):
    arrays = probe_arrays(seed=50 + sum(test_counts), train=(10, 12), test=test_counts, n_layers=2, width=12,
                          signal=[40.0, 0.0], constant_layers=[1])
    n = sum(test_counts)
    record = fit(arrays, 0, "media")
    assert rate(record) == 1.0
    assert int(record["nb_test_examples"]) == n and int(record["nb_train_examples"]) == 22
    # a constant layer gets one class for every row: the share of that class in the test set
    assert rate(fit(arrays, 1, "media")) in (test_counts[0] / n, test_counts[1] / n)


@pytest.mark.parametrize("seed,train,test,width,signal", [
    (61, (20, 20), (7, 7), 12, [0.0, 0.8, 1.6, 3.0]),
    (62, (33, 14), (9, 4), 48, [0.5, 1.2, 2.0, 0.2]),
    (63, (9, 9), (3, 2), 12, [1.0, 0.3, 2.5, 0.0]),
])
def test_success_rates_agree_with_the_logistic_regression_probe(seed, train, test, width, signal):
    arrays = probe_arrays(seed=seed, train=train, test=test, n_layers=4, width=width, signal=signal, test_shift=0.4)
    for layer in range(4):
        got = rate(fit(arrays, layer))
        assert _isclose(got, oracle_rate(arrays, layer), rel_tol=0.0, abs_tol=1e-9), (layer, got)


@pytest.mark.parametrize("empty_shape", ["flat", "full"])
def test_empty_test_set_gives_an_empty_record(empty_shape):
    train_x, train_y, test_x, test_y = probe_arrays(seed=70, train=(10, 10), test=(0, 0), n_layers=2, width=12,
                                                    signal=[1.0, 2.0])
    if empty_shape == "flat":
        # what the features of an empty set look like when built with np.array from no rows
        test_x, test_y = np.array([]), np.array([])
    for layer, group in ((0, "hierarchy"), (1, 9)):
        record = fit_regression(train_x, train_y, test_x, test_y, layer, group)
        assert record == {"layer": None, "relation_group_id": group, "success_rate": None, "nb_test_examples": None,
                          "nb_train_examples": None}
