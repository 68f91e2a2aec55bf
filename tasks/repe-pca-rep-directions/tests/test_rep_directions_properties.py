"""Property tests for PCARepReader.get_rep_directions (repe/rep_readers.py), from the paper.

LAT's third step (Section 3.1.1) takes the principal components of the collected
activations (the differences of contrastive pairs): per layer, the unit eigenvectors of
the covariance of the mean-centred states, in decreasing order of the variance they
explain. The paper leaves open the sign of each component (and, where two variances are
equal, the basis of their subspace); these tests never depend on either. The oracle
below is numpy's symmetric eigendecomposition of the float64 covariance, independent of
scikit-learn.

The reader is made and fitted in the candidate process (lmr_bridge): the probe below gets
the states chosen here and sends back what get_rep_directions returned and what it left on
the reader; every expected value is computed in this process.
"""
import copy
import math
import types

import numpy as np
import pytest
from lmr_bridge import probe

_allclose = np.allclose


@probe
def fitted(states, hidden_layers, n_components, transform_components):
    """In the candidate: PCARepReader(n_components) fitted on `states`: the directions returned,
    what the reader holds after (H_train_means, n_components), the states as they are after
    the call, and, for each of `transform_components`, RepReader.transform's scores once the
    returned directions are set as the pipeline sets them."""
    from rep_readers import PCARepReader

    width = next(iter(states.values())).shape[1]
    model = types.SimpleNamespace(config=types.SimpleNamespace(hidden_size=width))
    reader = PCARepReader(n_components=n_components)
    directions = reader.get_rep_directions(model, None, states, hidden_layers, train_choices=None)
    out = {"directions": directions, "H_train_means": dict(reader.H_train_means), "n_components": reader.n_components, "states": states}
    if transform_components:
        reader.directions = {layer: np.asarray(d).astype(np.float32) for layer, d in directions.items()}
        out["scores"] = [reader.transform(states, hidden_layers, component) for component in transform_components]
    return out


class Reader:
    """What the candidate's reader holds after the fit (the attributes the tests read)."""

    def __init__(self, got):
        self.H_train_means = got["H_train_means"]
        self.n_components = got["n_components"]


def contrastive_differences(seed, n_pairs, width, strengths, noise=0.25, dtype=np.float32):
    """Differences of shuffled contrastive pairs: +-(concept coefficients) along orthonormal directions, plus noise."""
    rng = np.random.default_rng(seed)
    concepts = np.linalg.qr(rng.normal(size=(width, len(strengths))))[0].T  # (k, width), orthonormal rows
    coef = rng.normal(size=(n_pairs, len(strengths))) * np.asarray(strengths)
    signs = rng.choice([-1.0, 1.0], size=(n_pairs, 1))  # which member of the pair came first
    diffs = signs * (coef @ concepts) + noise * rng.normal(size=(n_pairs, width))
    return diffs.astype(dtype)


def fit(states, hidden_layers, n_components):
    got = fitted(states, hidden_layers, n_components, [])
    return Reader(got), got["directions"]


def oracle(x, k):
    """Top-k eigenvalues and unit eigenvectors (rows) of the covariance of the centred rows."""
    x = np.asarray(x, dtype=np.float64)
    centred = x - x.mean(axis=0, keepdims=True)
    values, vectors = np.linalg.eigh(centred.T @ centred / (len(x) - 1))
    order = np.argsort(values)[::-1][:k]
    return values[order], vectors[:, order].T


def assert_same_up_to_sign(got, expected, atol=5e-5):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    for k in range(len(expected)):
        sign = 1.0 if float(np.dot(got[k], expected[k])) >= 0 else -1.0
        assert _allclose(sign * got[k], expected[k], rtol=0.0, atol=atol), "component %d differs beyond its sign" % k


LAYERS = [-1, -2, -3]
STATES = {layer: contrastive_differences(100 + i, 40, 32, [3.0 + i, 1.8, 1.0]) for i, layer in enumerate(LAYERS)}


def test_directions_are_the_covariance_eigenvectors_up_to_sign():
    _, directions = fit(STATES, LAYERS, 3)
    for layer in LAYERS:
        assert_same_up_to_sign(directions[layer], oracle(STATES[layer], 3)[1])


def test_directions_are_numpy_arrays_of_shape_components_by_hidden_size():
    _, directions = fit(STATES, LAYERS, 2)
    for layer in LAYERS:
        assert isinstance(directions[layer], np.ndarray), type(directions[layer])
        assert directions[layer].shape == (2, 32), directions[layer].shape
        assert np.issubdtype(directions[layer].dtype, np.floating), directions[layer].dtype


def test_directions_have_unit_norm():
    _, directions = fit(STATES, LAYERS, 3)
    for layer in LAYERS:
        norms = np.linalg.norm(np.asarray(directions[layer], dtype=np.float64), axis=1)
        assert _allclose(norms, 1.0, rtol=0.0, atol=1e-5), norms


def test_directions_are_mutually_orthogonal():
    _, directions = fit(STATES, LAYERS, 3)
    for layer in LAYERS:
        v = np.asarray(directions[layer], dtype=np.float64)
        off_diagonal = v @ v.T - np.diag(np.diag(v @ v.T))
        assert _allclose(off_diagonal, 0.0, rtol=0.0, atol=1e-5), off_diagonal


def test_components_come_in_decreasing_order_of_explained_variance():
    _, directions = fit(STATES, LAYERS, 3)
    for layer in LAYERS:
        x = STATES[layer].astype(np.float64)
        centred = x - x.mean(axis=0)
        variances = np.var(centred @ np.asarray(directions[layer], dtype=np.float64).T, axis=0, ddof=1)
        assert _allclose(variances, oracle(x, 3)[0], rtol=1e-4, atol=1e-6), variances
        assert all(variances[k] > variances[k + 1] for k in range(len(variances) - 1)), variances


def test_only_the_requested_layers_are_fitted():
    reader, directions = fit(STATES, [-3, -1], 1)
    assert sorted(directions) == [-3, -1]
    assert set(reader.H_train_means) == {-3, -1}


def test_each_layer_is_fitted_on_its_own_states():
    _, together = fit(STATES, LAYERS, 2)
    for layer in LAYERS:
        _, alone = fit({layer: STATES[layer]}, [layer], 2)
        assert_same_up_to_sign(together[layer], np.asarray(alone[layer], dtype=np.float64), atol=1e-6)


def test_a_common_offset_does_not_change_the_directions():
    """The states are centred: shifting every row by one vector (here along the weakest
    concept, and large) changes nothing, whereas an uncentred decomposition would follow it."""
    x = contrastive_differences(7, 30, 16, [2.5, 1.0])
    offset = np.linspace(-40.0, 60.0, 16).astype(np.float32)
    _, plain = fit({-1: x}, [-1], 2)
    _, shifted = fit({-1: x + offset}, [-1], 2)
    assert_same_up_to_sign(shifted[-1], np.asarray(plain[-1], dtype=np.float64), atol=1e-4)


def test_rotating_the_states_rotates_the_directions():
    x = contrastive_differences(8, 50, 12, [4.0, 2.0, 1.0]).astype(np.float64)
    rotation = np.linalg.qr(np.random.default_rng(9).normal(size=(12, 12)))[0]
    _, plain = fit({-1: x}, [-1], 3)
    _, rotated = fit({-1: x @ rotation.T}, [-1], 3)
    expected = np.asarray(plain[-1], dtype=np.float64) @ rotation.T
    assert_same_up_to_sign(rotated[-1], expected, atol=1e-5)


def test_equal_variances_are_recovered_as_a_subspace():
    """Two concepts with the same variance: any orthonormal basis of their plane is a correct
    pair of first components, so only the plane (its projector) is compared."""
    width = 10
    rng = np.random.default_rng(11)
    plane = np.linalg.qr(rng.normal(size=(width, 2)))[0].T  # (2, width)
    angles = 2.0 * math.pi * np.arange(12) / 12.0
    circle = 3.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1) @ plane  # isotropic in the plane
    rest = 0.2 * rng.normal(size=(12, width))
    rest -= (rest @ plane.T) @ plane  # small spread outside the plane only
    x = np.concatenate([circle + rest, -circle + rest]).astype(np.float32)
    _, directions = fit({-1: x}, [-1], 2)
    v = np.asarray(directions[-1], dtype=np.float64)
    assert _allclose(v.T @ v, plane.T @ plane, rtol=0.0, atol=1e-4)


def test_training_means_are_the_column_means_per_layer():
    reader, _ = fit(STATES, LAYERS, 1)
    for layer in LAYERS:
        mean = np.asarray(reader.H_train_means[layer], dtype=np.float64)
        assert mean.shape == (1, 32), mean.shape
        assert _allclose(mean, STATES[layer].astype(np.float64).mean(axis=0, keepdims=True), rtol=1e-5, atol=1e-6)


def test_n_components_is_the_number_of_directions_returned():
    reader, directions = fit(STATES, LAYERS, 2)
    assert reader.n_components == 2 and isinstance(reader.n_components, (int, np.integer))
    assert all(len(directions[layer]) == reader.n_components for layer in LAYERS)


def test_the_states_are_left_unchanged():
    # the candidate reports the arrays it was given as they are after the call
    states = fitted(copy.deepcopy(STATES), LAYERS, 2, [])["states"]
    assert sorted(states) == sorted(STATES)
    for layer in LAYERS:
        assert np.array_equal(states[layer], STATES[layer]) and states[layer].dtype == np.float32


def test_transform_after_fitting_projects_the_centred_states():
    """The pipeline's next step: RepReader.transform recentres with H_train_means and
    projects onto a fitted direction. The expected scores use the directions the candidate
    returned (transform projects onto whatever was fitted); the tests above anchor those
    directions to the oracle's eigenvectors."""
    got = fitted(STATES, LAYERS, 2, [0, 1])
    directions = got["directions"]
    for component, scores in zip((0, 1), got["scores"]):
        for layer in LAYERS:
            x = STATES[layer].astype(np.float64)
            v = np.asarray(directions[layer], dtype=np.float64)[component]
            expected = (x - x.mean(axis=0)) @ v / np.linalg.norm(v)
            got_scores = np.asarray(scores[layer], dtype=np.float64)
            assert _allclose(got_scores, expected, rtol=1e-4, atol=1e-4), (layer, component)


NONE_STATES = {-1: contrastive_differences(12, 80, 8, [6.0, 5.0, 4.2, 3.4, 2.6, 1.9, 1.3, 0.8], noise=0.05)}


def test_n_components_none_fits_every_component():
    _, directions = fit(NONE_STATES, [-1], None)
    assert_same_up_to_sign(directions[-1], oracle(NONE_STATES[-1], 8)[1], atol=1e-4)


def test_n_components_none_leaves_the_count_on_self():
    reader, _ = fit(NONE_STATES, [-1], None)
    assert reader.n_components == 8 and isinstance(reader.n_components, (int, np.integer)), reader.n_components
