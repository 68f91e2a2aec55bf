"""Replay tests: the implementation against the reference's values in fixtures/hit_cases.json.

generators/hit_cases.py ran the reference HiT losses on seeded inputs (triplets of points in
Poincare balls of several curvatures, the tiny encoder of tiny_hit.py on its triplets) and
wrote the inputs, the settings and the reference's loss values and input gradients. Each
test here rebuilds one case through the public constructors, calls the implementation in
the workspace and compares, within RTOL/ATOL (float32 inputs: any sound float32 or float64
computation of the paper's distances agrees to far better than this).
"""
import json
from pathlib import Path

import numpy as np
import pytest
import torch

_allclose = np.allclose  # bound before the code under test is imported

from geoopt.manifolds import PoincareBall  # noqa: E402

import tiny_hit  # noqa: E402
from hierarchy_transformers.losses.hit_loss import (  # noqa: E402
    HierarchyTransformerLoss,
    HyperbolicCentripetalLoss,
    HyperbolicClusteringLoss,
)
from hierarchy_transformers.models.hierarchy_transformer.hyperbolic import get_circum_poincareball  # noqa: E402

RTOL = 1e-4
ATOL = 1e-5

CASES = json.loads((Path(__file__).resolve().parent / "../fixtures/hit_cases.json").read_text(encoding="utf-8"))
SUB = CASES["sub_loss_cases"]
FULL = CASES["full_loss_cases"]


def manifold_of(case):
    spec = case["manifold"]
    return get_circum_poincareball(spec["value"]) if spec["kind"] == "circum" else PoincareBall(c=spec["value"])


def triplet_of(case):
    shape = case["shape"]
    return [torch.tensor(case[k], dtype=torch.float32).reshape(shape).requires_grad_(True) for k in ("child", "parent", "negative")]


def values(x):
    return np.asarray(torch.as_tensor(x).detach().double().cpu().numpy())


def gradients(loss, inputs):
    grads = torch.autograd.grad(loss, inputs, allow_unused=True)
    return [np.zeros(tuple(t.shape)) if g is None else values(g) for g, t in zip(grads, inputs)]


@pytest.mark.parametrize("case", SUB, ids=[c["name"] for c in SUB])
def test_clustering_loss_matches_the_reference(case):
    loss = HyperbolicClusteringLoss(manifold_of(case), case["clustering_margin"])(*triplet_of(case))
    assert _allclose(values(loss), case["cluster_loss"], rtol=RTOL, atol=ATOL), (float(loss), case["cluster_loss"])


@pytest.mark.parametrize("case", SUB, ids=[c["name"] for c in SUB])
def test_clustering_gradients_match_the_reference(case):
    inputs = triplet_of(case)
    loss = HyperbolicClusteringLoss(manifold_of(case), case["clustering_margin"])(*inputs)
    for name, got in zip(("child", "parent", "negative"), gradients(loss, inputs)):
        want = np.asarray(case["cluster_grad"][name]).reshape(case["shape"])
        assert _allclose(got, want, rtol=RTOL, atol=ATOL), name


@pytest.mark.parametrize("case", SUB, ids=[c["name"] for c in SUB])
def test_centripetal_loss_matches_the_reference(case):
    loss = HyperbolicCentripetalLoss(manifold_of(case), case["centripetal_margin"])(*triplet_of(case))
    assert _allclose(values(loss), case["centri_loss"], rtol=RTOL, atol=ATOL), (float(loss), case["centri_loss"])


@pytest.mark.parametrize("case", SUB, ids=[c["name"] for c in SUB])
def test_centripetal_gradients_match_the_reference(case):
    inputs = triplet_of(case)
    loss = HyperbolicCentripetalLoss(manifold_of(case), case["centripetal_margin"])(*inputs)
    grads = gradients(loss, inputs)
    for name, got in zip(("child", "parent"), grads):
        want = np.asarray(case["centri_grad"][name]).reshape(case["shape"])
        assert _allclose(got, want, rtol=RTOL, atol=ATOL), name
    assert _allclose(grads[2], 0.0), "the negatives take no part in the centripetal loss"


_MODELS = {}


def model_for(case):
    seed = case["model_seed"]
    if seed not in _MODELS:
        _MODELS[seed] = tiny_hit.make_model(seed=seed)
    return _MODELS[seed]


def full_ids(case):
    return "w%g-m%g-w%g-m%g" % (
        case["clustering_loss_weight"], case["clustering_loss_margin"], case["centripetal_loss_weight"], case["centripetal_loss_margin"]
    )


@pytest.mark.parametrize("case", FULL, ids=[full_ids(c) for c in FULL])
def test_hierarchy_transformer_loss_matches_the_reference(case):
    model = model_for(case)
    loss = HierarchyTransformerLoss(
        model,
        clustering_loss_weight=case["clustering_loss_weight"],
        clustering_loss_margin=case["clustering_loss_margin"],
        centripetal_loss_weight=case["centripetal_loss_weight"],
        centripetal_loss_margin=case["centripetal_loss_margin"],
    )
    out = loss(tiny_hit.features(model), None)
    for key in ("loss", "cluster_loss", "centri_loss"):
        assert _allclose(values(out[key]), case[key], rtol=RTOL, atol=ATOL), (key, float(out[key]), case[key])
