"""Property tests for perform_classification_by_relation_group (src/classification/classifier.py).

Each relation group in turn is the test set and the other groups the training set, both
balanced between CK and PK (the paper's Section 4.3), with one probe per layer at the chosen
token of the chosen module. These checks hold whichever examples the balancing keeps: the
sizes of the balanced sets, activations that separate the two sources (every probe is then
right), activations that are the same for every prompt (every probe then predicts one class
for all, which is right on exactly half of a balanced test set), a direction that is
reversed between groups (so a probe that never saw the test group is always wrong), and
what the records hold and in which order.

The code under test runs in the candidate process (lmr_bridge): the frames are built here
(tests/probing_frames.py, in this process) and go there as pandas frames; the records come
back as plain data and every expectation is decided here, from the frames this file built.
"""
import copy
import math

import numpy as np
import pytest
from lmr_bridge import candidate, probe

from probing_frames import POSITIONS, flags, probing_results

classify = candidate.function("src.classification.classifier:perform_classification_by_relation_group")

_isclose = math.isclose
_array_equal = np.array_equal

GROUPS = [["geographic-geopolitic-language", 30, 11], ["corporate-products-employment", 14, 8], ["religion", 9, 5],
          ["hierarchy", 6, 4]]
KEYS = {"layer", "relation_group_id", "success_rate", "nb_test_examples", "nb_train_examples"}


def run(frame, module="mlp", position="relation_query"):
    return list(classify(frame, vertical=True, position=position, **flags(module)))


def counts(groups):
    return {g: (ck, pk) for g, ck, pk in groups}


def by_group(records):
    out = {}
    for r in records:
        out.setdefault(r["relation_group_id"], []).append(r)
    return out


def constant_cells(frame, module, positions, seed=0):
    """A copy of `frame` whose `module` cells hold, at `positions`, the same vectors in every row.

    What a causal LM stores at the first token of prompts that start with the same token.
    """
    rng = np.random.default_rng(seed)
    frame = frame.copy()
    first = frame[module].iloc[0]
    fixed = {p: [[rng.standard_normal(len(entry[0])).astype(np.float32)] for entry in first[p]] for p in positions}
    cells = []
    for cell in frame[module]:
        cell = dict(cell)
        for p in positions:
            cell[p] = [[v[0].copy()] for v in fixed[p]]
        cells.append(cell)
    frame[module] = cells
    return frame


def test_one_record_per_group_and_layer_in_order():
    frame = probing_results(seed=11, groups=GROUPS, module="mlp", n_layers=5, signal={"relation_query": [0, 1, 2, 3, 4]})
    records = run(frame)
    assert all(isinstance(r, dict) and set(r) == KEYS for r in records)
    got = [(r["relation_group_id"], r["layer"]) for r in records]
    assert got == [(g, layer) for g, _, _ in GROUPS for layer in range(5)]


def test_groups_in_order_of_first_appearance():
    frame = probing_results(seed=12, groups=GROUPS, module="mhsa", n_layers=2, signal={"relation_query": [1, 3]},
                            interleave=True)
    first_seen = list(dict.fromkeys(frame["relation_group_id"]))
    records = run(frame, module="mhsa")
    assert [r["relation_group_id"] for r in records] == [g for g in first_seen for _ in range(2)]


def test_test_and_training_sets_are_balanced_and_disjoint():
    frame = probing_results(seed=13, groups=GROUPS, module="mlp", n_layers=3, signal={"relation_query": [0, 2, 5]})
    sizes = counts(GROUPS)
    for r in run(frame):
        ck, pk = sizes[r["relation_group_id"]]
        rest_ck = sum(c for g, (c, _) in sizes.items() if g != r["relation_group_id"])
        rest_pk = sum(p for g, (_, p) in sizes.items() if g != r["relation_group_id"])
        assert r["nb_test_examples"] == 2 * min(ck, pk)
        assert r["nb_train_examples"] == 2 * min(rest_ck, rest_pk)


def test_separable_activations_are_always_classified_right():
    frame = probing_results(seed=14, groups=GROUPS, module="mlp", n_layers=3, signal={"relation_query": [40, 40, 40]})
    for r in run(frame):
        assert r["success_rate"] == pytest.approx(1.0, abs=1e-12), r


def test_each_group_is_left_out_of_its_training_set():
    # PK and CK lie on opposite sides in the two groups: a probe trained on one group alone is
    # wrong on every example of the other; one that also saw the test group would not be.
    groups = [["religion", 18, 9], ["media", 12, 15]]
    frame = probing_results(seed=15, groups=groups, module="mlp", n_layers=2, signal={"relation_query": [40, 40]},
                            flip=["media"])
    records = run(frame)
    assert len(records) == 4
    for r in records:
        assert r["success_rate"] == pytest.approx(0.0, abs=1e-12), r


def test_identical_activations_give_exactly_chance_level():
    frame = probing_results(seed=16, groups=GROUPS, module="mlp", n_layers=3, stored=["first"], signal={})
    frame = constant_cells(frame, "mlp", ["first"])
    for r in run(frame, position="first"):
        assert r["success_rate"] == pytest.approx(0.5, abs=1e-12), r


@pytest.mark.parametrize("position", POSITIONS)
def test_only_the_requested_token_is_probed(position):
    # every position stored; the requested one separates PK from CK, the others are identical in every row
    frame = probing_results(seed=17, groups=GROUPS, module="mlp", n_layers=2, stored=list(POSITIONS),
                            signal={position: [40, 40]})
    frame = constant_cells(frame, "mlp", [p for p in POSITIONS if p != position])
    for p in POSITIONS:
        expected = 1.0 if p == position else 0.5
        for r in run(frame, position=p):
            assert r["success_rate"] == pytest.approx(expected, abs=1e-12), (p, r)


@pytest.mark.parametrize("module", ["mlp", "mlp-l1", "mhsa"])
def test_only_the_selected_module_is_probed(module):
    # three module columns, as when the activations of all three were stored; only `module` carries the signal
    frame = probing_results(seed=18, groups=GROUPS, module=module, n_layers=2, signal={"relation_query": [40, 40]})
    for other in ("mlp", "mlp-l1", "mhsa"):
        if other != module:
            width = {"mlp": 12, "mlp-l1": 48, "mhsa": 12}[other]
            filler = probing_results(seed=19, groups=GROUPS, module=other, n_layers=2, signal={}, width=width)
            frame[other] = list(constant_cells(filler, other, ["relation_query"])[other])
    for other in ("mlp", "mlp-l1", "mhsa"):
        expected = 1.0 if other == module else 0.5
        for r in run(frame, module=other):
            assert r["success_rate"] == pytest.approx(expected, abs=1e-12), (other, r)


def test_group_with_one_knowledge_source_only_gives_empty_records():
    groups = [["religion", 14, 6], ["media", 9, 0], ["hierarchy", 10, 7], ["naming-reference", 0, 4]]
    frame = probing_results(seed=20, groups=groups, module="mlp", n_layers=3, signal={"relation_query": [1, 3, 6]})
    grouped = by_group(run(frame))
    assert list(grouped) == ["religion", "media", "hierarchy", "naming-reference"]
    for g in ("media", "naming-reference"):
        assert len(grouped[g]) == 3
        for r in grouped[g]:
            assert r == {"layer": None, "relation_group_id": g, "success_rate": None, "nb_test_examples": None,
                         "nb_train_examples": None}
    for g in ("religion", "hierarchy"):
        assert [r["layer"] for r in grouped[g]] == [0, 1, 2]


def test_success_rates_are_fractions_of_the_test_set():
    frame = probing_results(seed=21, groups=GROUPS, module="mlp-l1", n_layers=4, stored=["object"],
                            signal={"object": [0, 1, 2, 3]})
    for r in run(frame, module="mlp-l1", position="object"):
        rate, n = float(r["success_rate"]), r["nb_test_examples"]
        assert 0.0 <= rate <= 1.0
        assert _isclose(rate * n, round(rate * n), abs_tol=1e-9), r


def test_integer_group_ids_come_back_as_given():
    groups = [[5, 12, 6], [2, 8, 8], [9, 10, 3]]
    frame = probing_results(seed=22, groups=groups, module="mhsa", n_layers=2, signal={"relation_query": [2, 4]})
    records = run(frame, module="mhsa")
    ids = [r["relation_group_id"] for r in records]
    assert ids == [5, 5, 2, 2, 9, 9]
    assert all(isinstance(g, (int, np.integer)) for g in ids)


@probe
def frame_after_classifying(frame, position, include):
    """In the candidate: the input frame as perform_classification_by_relation_group leaves it."""
    from src.classification.classifier import perform_classification_by_relation_group

    perform_classification_by_relation_group(frame, vertical=True, position=position, **include)
    return frame


def test_input_frame_is_not_modified():
    before = probing_results(seed=23, groups=GROUPS, module="mlp", n_layers=2, signal={"relation_query": [1, 4]})
    frame = frame_after_classifying(copy.deepcopy(before), "relation_query", flags("mlp"))
    assert list(frame.columns) == list(before.columns)
    assert _array_equal(frame.index.to_numpy(), before.index.to_numpy())
    for column in frame.columns:
        if column == "mlp":
            continue
        assert frame[column].tolist() == before[column].tolist(), column
    for cell, old in zip(frame["mlp"], before["mlp"]):
        assert set(cell) == set(old)
        for p in old:
            assert len(cell[p]) == len(old[p])
            for v, w in zip(cell[p], old[p]):
                assert len(v) == 1 and _array_equal(v[0], w[0])
