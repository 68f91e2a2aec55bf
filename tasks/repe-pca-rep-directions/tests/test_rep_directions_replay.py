"""Replay of the reference's PCARepReader.get_rep_directions on the states in fixtures/pca_cases.json.

generators/pca_cases.py wrote that file by running the reference (in float64) on
float32 hidden-state differences laid out as RepReadingPipeline.get_directions passes
them. Each case here makes a reader with the recorded n_components, feeds the same
states (float32, or float64 for the case recorded so), and compares with the recording:
the directions of every requested layer row by row *up to sign* (PCA leaves the sign of
each component open), the stored training means, and n_components after the call.
"""
import json
import math
import types
from pathlib import Path

import numpy as np
import pytest
from lmr_bridge import probe

_isclose = math.isclose
ATOL_DIRECTION = 5e-5  # unit vectors from float32 states; eigen-gaps are large in every case
RTOL_MEAN, ATOL_MEAN = 1e-5, 1e-5

CASES = json.loads((Path(__file__).resolve().parent / "../fixtures/pca_cases.json").read_text())["cases"]
IDS = [c["name"] for c in CASES]


@probe
def fitted(states, hidden_layers, n_components, width):
    """In the candidate: a reader made with n_components, fitted on the states: the directions
    returned, and what the reader holds after the call."""
    from rep_readers import PCARepReader

    model = types.SimpleNamespace(config=types.SimpleNamespace(hidden_size=width))
    reader = PCARepReader(n_components=n_components)
    directions = reader.get_rep_directions(model, None, states, hidden_layers, train_choices=None)
    return {"directions": directions, "H_train_means": dict(reader.H_train_means), "n_components": reader.n_components}


class Reader:
    """What the candidate's reader holds after the call (the attributes the tests read)."""

    def __init__(self, got):
        self.H_train_means = got["H_train_means"]
        self.n_components = got["n_components"]


def run(case):
    dtype = np.float64 if case["dtype"] == "float64" else np.float32
    states = {int(layer): np.array(rows, dtype=dtype) for layer, rows in case["hidden_states"].items()}
    width = len(next(iter(case["hidden_states"].values()))[0])
    got = fitted(states, list(case["hidden_layers"]), case["n_components"], width)
    return Reader(got), got["directions"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_directions_match_recorded_case_up_to_sign(case):
    _, directions = run(case)
    assert isinstance(directions, dict)
    assert sorted(directions) == sorted(case["hidden_layers"]), sorted(directions)
    for layer in case["hidden_layers"]:
        expected = case["directions"][str(layer)]
        got = np.asarray(directions[layer], dtype=np.float64)
        assert got.shape == (len(expected), len(expected[0])), (layer, got.shape)
        for k, row in enumerate(expected):
            dot = float(np.dot(got[k], row))
            sign = 1.0 if dot >= 0 else -1.0
            for j, (g, e) in enumerate(zip(got[k].tolist(), row)):
                assert _isclose(sign * g, e, rel_tol=0.0, abs_tol=ATOL_DIRECTION), \
                    "layer %d, component %d, entry %d: expected %r (up to sign), got %r" % (layer, k, j, e, g)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_training_means_match_recorded_case(case):
    reader, _ = run(case)
    for layer in case["hidden_layers"]:
        expected = case["H_train_means"][str(layer)]
        got = np.asarray(reader.H_train_means[layer], dtype=np.float64)
        assert got.shape == (1, len(expected[0])), (layer, got.shape)
        for j, (g, e) in enumerate(zip(got[0].tolist(), expected[0])):
            assert _isclose(g, e, rel_tol=RTOL_MEAN, abs_tol=ATOL_MEAN), "layer %d, mean[%d]: expected %r, got %r" % (layer, j, e, g)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_n_components_after_the_call_matches_recorded_case(case):
    reader, _ = run(case)
    assert reader.n_components == case["n_components_after"]
