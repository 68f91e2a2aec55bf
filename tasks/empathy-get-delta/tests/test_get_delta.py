"""Tests for get_delta (analysis/analysis_after_processing.py), ours.

get_delta(matrix, group_option) is the paper's Empathy Gap Score: over a standardized
emotion matrix (rows perceivers, columns experiencers of one group option), the mean of the
in-group cells minus the mean of the out-group cells. In-group cells are the pairs of the
same ethnicity for 'ethnicity' and the diagonal otherwise (empathy_matrices.py). The oracle
below takes the two means with boolean masks.

get_delta runs in the candidate process (lmr_bridge); every matrix it is given is built here,
permuted matrices included (shuffled here the way the module's permute_matrix shuffles them),
so every expected value is computed in this process.
"""
import json
import random
from pathlib import Path

import numpy as np
import pytest
from lmr_bridge import candidate, probe

_isclose = np.isclose
_array_equal = np.array_equal

import empathy_matrices as em  # noqa: E402

get_delta = candidate.function("analysis.analysis_after_processing:get_delta")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
OPTIONS = ["ethnicity", "nationality", "religion"]


def oracle(matrix, group_option):
    mask = em.in_group(group_option)
    return float(matrix[mask].mean() - matrix[~mask].mean())


def as_number(value):
    assert np.ndim(value) == 0, f"get_delta returned {type(value).__name__} of shape {np.shape(value)}, not a number"
    return float(value)


def permuted(matrix, rng):
    """The matrix with its rows and its columns shuffled as the module's permute_matrix does it
    (one shuffle of the row order, then one of the column order, both drawn from `rng`)."""
    n = matrix.shape[0]
    rows = list(range(n))
    rng.shuffle(rows)
    cols = list(range(n))
    rng.shuffle(cols)
    return matrix[np.ix_(rows, cols)].copy()


def close(a, b):
    return bool(_isclose(a, b, rtol=1e-9, atol=1e-12))


CASES = json.loads((FIXTURES / "deltas.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_the_recorded_reference(case):
    matrix = np.array(case["matrix"])
    assert close(as_number(get_delta(matrix, case["group_option"])), case["delta"])


@pytest.mark.parametrize("group_option", OPTIONS)
def test_is_in_group_mean_minus_out_group_mean(group_option):
    matrix = em.emotion_matrix(group_option, seed=7)
    assert close(as_number(get_delta(matrix, group_option)), oracle(matrix, group_option))


def test_ethnicity_in_group_means_the_same_ethnicity_not_the_same_label():
    # 1 exactly where perceiver and experiencer share an ethnicity: every in-group cell is 1
    matrix = em.in_group("ethnicity").astype(float)
    assert close(as_number(get_delta(matrix, "ethnicity")), 1.0)


@pytest.mark.parametrize("group_option", ["nationality", "religion"])
def test_other_options_in_group_is_the_same_identity(group_option):
    n = em.SIZES[group_option]
    matrix = 3.0 * np.eye(n) + 1.0
    assert close(as_number(get_delta(matrix, group_option)), 3.0)


def test_weights_every_cell_equally_within_each_side():
    # blocks of different sizes: a mean over cells, not a mean of per-block or per-row means
    matrix = np.zeros((18, 18))
    matrix[0:5, 0:5] = 2.0  # the five-label block
    matrix[9:12, 9:12] = -1.0  # the three-label block
    matrix[0, 17] = 5.0  # one out-group cell
    mask = em.in_group("ethnicity")
    expected = (25 * 2.0 - 9 * 1.0) / mask.sum() - 5.0 / (~mask).sum()
    assert close(as_number(get_delta(matrix, "ethnicity")), expected)


@pytest.mark.parametrize("group_option", OPTIONS)
def test_adding_a_constant_leaves_it_unchanged(group_option):
    matrix = em.emotion_matrix(group_option, seed=8)
    assert close(as_number(get_delta(matrix + 2.5, group_option)), as_number(get_delta(matrix, group_option)))


@pytest.mark.parametrize("group_option", OPTIONS)
def test_swapping_perceivers_and_experiencers_leaves_it_unchanged(group_option):
    matrix = em.emotion_matrix(group_option, seed=9)
    assert close(as_number(get_delta(matrix.T.copy(), group_option)), oracle(matrix, group_option))


@pytest.mark.parametrize("group_option", OPTIONS)
def test_on_permuted_matrices_as_the_permutation_test_makes_them(group_option):
    rng = random.Random(11)
    matrix = em.emotion_matrix(group_option, seed=10)
    for _ in range(5):
        shuffled = permuted(matrix, rng)
        assert close(as_number(get_delta(shuffled, group_option)), oracle(shuffled, group_option))


def test_no_in_group_effect_gives_zero():
    matrix = np.full((21, 21), -0.25)
    assert close(as_number(get_delta(matrix, "nationality")), 0.0)


@probe
def matrix_after_get_delta(matrix, group_option):
    """In the candidate: the matrix as get_delta leaves it."""
    from analysis.analysis_after_processing import get_delta

    get_delta(matrix, group_option)
    return matrix


def test_leaves_the_matrix_unchanged():
    # the candidate's own report of its matrix after the call; the values above are the anchor
    matrix = em.emotion_matrix("ethnicity", seed=12)
    before = matrix.copy()
    after = matrix_after_get_delta(matrix, "ethnicity")
    assert _array_equal(after, before)
