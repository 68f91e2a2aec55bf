"""Property tests for the probe's features and targets (src/classification/data.py).

get_features_and_targets_for_dataset (through combine_selected_modules_activations) turns a set
of probing results into what the probes are fitted on: for every row, the vectors the selected
module stored at the requested token, one per layer, and the row's knowledge source encoded with
the given label encoder. The expected arrays are built here, in the oracle, straight from the
cells of the frames this file made; the code under test runs in the candidate (lmr_bridge) and
only its arrays come back.
"""
import copy

import numpy as np
import pytest
from lmr_bridge import candidate, probe

from probe_data import ENCODER, POSITIONS, activation_frame, flags

features_and_targets = candidate.function("src.classification.data:get_features_and_targets_for_dataset")
combine = candidate.function("src.classification.data:combine_selected_modules_activations")

_array_equal = np.array_equal
_asarray = np.asarray

GROUPS = [["religion", 7, 4], ["media", 3, 5], ["hierarchy", 4, 0]]
ALL = {"mlp": 12, "mlp-l1": 48, "mhsa": 12}
# the order in which the selected modules' layers follow each other along the layer axis
STACKING = ("mhsa", "mlp", "mlp-l1")


def expected_features(frame, modules, position):
    """(rows, layers of every selected module, 1, width), written out row by row from the cells."""
    rows = []
    for _, row in frame.iterrows():
        layers = []
        for module in STACKING:
            if module in modules:
                layers.extend([[np.asarray(entry[0], dtype=np.float64)] for entry in row[module][position]])
        rows.append(layers)
    return np.array(rows, dtype=np.float64)


def call(frame, modules, position, encoder=ENCODER):
    x, y = features_and_targets(dataset=frame, vertical=True, position=position, label_encoder=encoder,
                                **flags(*modules))
    return _asarray(x), _asarray(y)


def assert_features(x, frame, modules, position):
    want = expected_features(frame, modules, position)
    assert x.shape == want.shape, (x.shape, want.shape)
    assert np.issubdtype(x.dtype, np.floating), x.dtype
    assert _array_equal(x.astype(np.float64), want), "the features are not the stored vectors, in row order"


@pytest.mark.parametrize("module", ["mlp", "mlp-l1", "mhsa"])
def test_features_are_the_selected_modules_vectors(module):
    frame = activation_frame(seed=31, groups=GROUPS, modules=ALL, n_layers=3, signal={module + "@relation_query": [1, 2, 3]})
    x, _ = call(frame, [module], "relation_query")
    assert_features(x, frame, [module], "relation_query")


@pytest.mark.parametrize("position", POSITIONS)
def test_features_are_read_at_the_requested_token(position):
    frame = activation_frame(seed=32, groups=GROUPS, modules={"mlp": 12}, n_layers=4, stored=POSITIONS)
    x, _ = call(frame, ["mlp"], position)
    assert_features(x, frame, ["mlp"], position)


def test_rows_follow_the_frame_whatever_its_index():
    frame = activation_frame(seed=33, groups=GROUPS, modules={"mhsa": 12, "mlp": 12}, n_layers=2, interleave=True,
                             index="shuffled")
    x, y = call(frame, ["mhsa"], "relation_query")
    assert_features(x, frame, ["mhsa"], "relation_query")
    assert [int(v) for v in y] == [ENCODER[s] for s in frame["knowledge_source"]]


def test_two_modules_are_stacked_along_the_layer_axis():
    frame = activation_frame(seed=34, groups=GROUPS, modules=ALL, n_layers=3, signal={"mlp@relation_query": [4, 4, 4]})
    x, _ = call(frame, ["mlp", "mhsa"], "relation_query")
    assert x.shape[:3] == (len(frame), 6, 1)
    assert_features(x, frame, ["mhsa", "mlp"], "relation_query")


@pytest.mark.parametrize("encoder", [ENCODER, {"CK": 1, "PK": 0}, {"PK": 7, "CK": 3}])
def test_targets_encode_the_knowledge_source(encoder):
    frame = activation_frame(seed=35, groups=GROUPS, modules={"mlp": 12}, n_layers=2, interleave=True)
    _, y = call(frame, ["mlp"], "relation_query", encoder)
    assert y.shape == (len(frame),)
    assert np.issubdtype(y.dtype, np.integer), y.dtype
    assert [int(v) for v in y] == [encoder[s] for s in frame["knowledge_source"]]


def test_the_combined_activations_alone():
    frame = activation_frame(seed=36, groups=GROUPS, modules=ALL, n_layers=2, stored=["object", "relation_query"])
    x = _asarray(combine(dataset=frame, vertical=True, position="object", include_mhsa=False, include_mlps=False,
                         include_mlps_l1=True))
    assert_features(x, frame, ["mlp-l1"], "object")


def test_an_empty_set_gives_no_rows():
    frame = activation_frame(seed=37, groups=GROUPS, modules={"mlp": 12}, n_layers=3).iloc[:0]
    x, y = call(frame, ["mlp"], "relation_query")
    assert x.shape[0] == 0 and len(y) == 0


@probe
def frame_after(frame, position, include):
    """In the candidate: the frame as get_features_and_targets_for_dataset leaves it."""
    from src.classification.data import get_features_and_targets_for_dataset

    get_features_and_targets_for_dataset(dataset=frame, vertical=True, position=position,
                                         label_encoder={"CK": 0, "PK": 1}, **include)
    return frame


def test_the_frame_is_left_unchanged():
    before = activation_frame(seed=38, groups=GROUPS, modules={"mlp": 12, "mhsa": 12}, n_layers=2)
    after = frame_after(copy.deepcopy(before), "relation_query", flags("mlp", "mhsa"))
    assert list(after.columns) == list(before.columns)
    assert _array_equal(after.index.to_numpy(), before.index.to_numpy())
    for column in ("knowledge_source", "relation_group_id", "rel_lemma"):
        assert after[column].tolist() == before[column].tolist()
    for module in ("mlp", "mhsa"):
        for cell, old in zip(after[module], before[module]):
            assert set(cell) == set(old)
            for p in old:
                assert len(cell[p]) == len(old[p])
                for v, w in zip(cell[p], old[p]):
                    assert len(v) == 1 and _array_equal(v[0], w[0])
