"""Property tests for the HiT losses (src/hierarchy_transformers/losses/hit_loss.py), from the paper.

The oracle below is written from the paper's definitions, in float64, independently of geoopt:
the distance of the Poincare ball of curvature c in its closed arccosh form,
  d(u, v) = arccosh(1 + 2c|u - v|^2 / ((1 - c|u|^2)(1 - c|v|^2))) / sqrt(c),
the hyperbolic norm as the distance to the origin, 2 artanh(sqrt(c)|u|) / sqrt(c),
the clustering hinge max(d(child, parent) - d(child, negative) + alpha, 0), the centripetal
hinge max(|parent| - |child| + beta, 0) in hyperbolic norms, each averaged over the batch, and
the HiT loss as their weighted sum. Inputs are what HierarchyTransformerLoss.forward hands the
two losses (batch x dim float32 embeddings inside the ball, requiring grad) or, for the full
loss, tokenised triplet columns for the tiny encoder of tiny_hit.py.
"""
import math

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


# ------------------------------------------------------------------------- the oracle


def curvature(manifold):
    return float(manifold.c)


def oracle_dist(u, v, c):
    u, v = u.double(), v.double()
    sq = ((u - v) ** 2).sum(-1)
    den = (1 - c * (u * u).sum(-1)) * (1 - c * (v * v).sum(-1))
    return torch.acosh(1 + 2 * c * sq / den) / math.sqrt(c)


def oracle_norm(u, c):
    u = u.double()
    return 2 * torch.atanh(math.sqrt(c) * u.norm(dim=-1)) / math.sqrt(c)


def oracle_cluster(child, parent, negative, c, margin):
    return torch.relu(oracle_dist(child, parent, c) - oracle_dist(child, negative, c) + margin).mean()


def oracle_centri(child, parent, c, margin):
    return torch.relu(oracle_norm(parent, c) - oracle_norm(child, c) + margin).mean()


# ------------------------------------------------------------------------- inputs


def ball_points(gen, n, dim, c, low, high):
    radius = 1.0 / math.sqrt(c)
    direction = torch.randn(n, dim, generator=gen)
    direction = direction / direction.norm(dim=-1, keepdim=True)
    return direction * (low + (high - low) * torch.rand(n, 1, generator=gen)) * radius


def leaf(t):
    return t.detach().clone().float().requires_grad_(True)


def triplet(seed, n, dim, c, low=0.05, high=0.9):
    gen = torch.Generator().manual_seed(seed)
    return [leaf(ball_points(gen, n, dim, c, low, high)) for _ in range(3)]


def values(x):
    return np.asarray(torch.as_tensor(x).detach().double().cpu().numpy())


# (manifold, dim, points' Euclidean norms as fractions of the radius)
BALLS = {
    "circum-16": (lambda: get_circum_poincareball(16), 16, 0.05, 0.9),
    "circum-8": (lambda: get_circum_poincareball(8), 8, 0.1, 0.7),
    "circum-64-near-boundary": (lambda: get_circum_poincareball(64), 64, 0.6, 0.97),
    "unit-ball": (lambda: PoincareBall(c=1.0), 5, 0.05, 0.9),
}
MARGINS = {"circum-16": (5.0, 0.5), "circum-8": (1.5, 1.0), "circum-64-near-boundary": (3.0, 2.0), "unit-ball": (0.3, 0.1)}


def setting(name, seed=0, n=8):
    make, dim, low, high = BALLS[name]
    manifold = make()
    return manifold, triplet(seed, n, dim, curvature(manifold), low, high)


# ------------------------------------------------------------------- clustering loss


@pytest.mark.parametrize("ball", list(BALLS))
def test_clustering_loss_equals_the_oracle(ball):
    manifold, (child, parent, negative) = setting(ball, seed=1)
    margin = MARGINS[ball][0]
    got = HyperbolicClusteringLoss(manifold, margin)(child, parent, negative)
    want = oracle_cluster(child, parent, negative, curvature(manifold), margin)
    assert _allclose(values(got), values(want), rtol=RTOL, atol=ATOL), (float(got), float(want))


@pytest.mark.parametrize("ball", list(BALLS))
def test_clustering_loss_gradients_equal_the_oracle(ball):
    manifold, inputs = setting(ball, seed=2)
    margin = MARGINS[ball][0]
    got = torch.autograd.grad(HyperbolicClusteringLoss(manifold, margin)(*inputs), inputs, allow_unused=True)
    want = torch.autograd.grad(oracle_cluster(*inputs, curvature(manifold), margin), inputs)
    for name, g, w in zip(("child", "parent", "negative"), got, want):
        assert g is not None, name
        assert _allclose(values(g), values(w), rtol=1e-3, atol=ATOL), name


def test_clustering_loss_is_a_batch_mean():
    manifold, (child, parent, negative) = setting("circum-16", seed=3, n=5)
    loss = HyperbolicClusteringLoss(manifold, 5.0)
    once = loss(child, parent, negative)
    twice = loss(torch.cat([child, child]), torch.cat([parent, parent]), torch.cat([negative, negative]))
    single = [loss(child[i : i + 1], parent[i : i + 1], negative[i : i + 1]) for i in range(5)]
    assert _allclose(values(twice), values(once), rtol=RTOL, atol=ATOL)
    assert _allclose(values(once), np.mean([values(s) for s in single]), rtol=RTOL, atol=ATOL)


def test_clustering_loss_vanishes_when_every_negative_is_farther_by_the_margin():
    manifold = get_circum_poincareball(16)
    gen = torch.Generator().manual_seed(4)
    child = ball_points(gen, 6, 16, 1 / 16, 0.4, 0.6)
    parent, negative = leaf(child * 0.9), leaf(-child)
    child = leaf(child)
    loss = HyperbolicClusteringLoss(manifold, 0.5)(child, parent, negative)
    grads = torch.autograd.grad(loss, [child, parent, negative], allow_unused=True)
    assert float(loss) == 0.0
    assert all(g is None or float(g.abs().max()) == 0.0 for g in grads)


def test_clustering_margin_adds_to_an_active_loss():
    manifold, (child, parent, negative) = setting("circum-16", seed=5)
    small = HyperbolicClusteringLoss(manifold, 20.0)(child, parent, negative)
    large = HyperbolicClusteringLoss(manifold, 22.5)(child, parent, negative)
    assert _allclose(values(large) - values(small), 2.5, rtol=RTOL, atol=1e-4)


def test_clustering_loss_is_a_differentiable_scalar():
    manifold, inputs = setting("circum-8", seed=6)
    loss = HyperbolicClusteringLoss(manifold, 1.5)(*inputs)
    assert isinstance(loss, torch.Tensor) and loss.dim() == 0
    assert loss.requires_grad


def test_clustering_loss_leaves_its_inputs_unchanged():
    manifold, inputs = setting("circum-16", seed=7)
    before = [values(t).copy() for t in inputs]
    HyperbolicClusteringLoss(manifold, 5.0)(*inputs)
    assert all(np.array_equal(values(t), b) for t, b in zip(inputs, before))


# ------------------------------------------------------------------- centripetal loss


@pytest.mark.parametrize("ball", list(BALLS))
def test_centripetal_loss_equals_the_oracle(ball):
    manifold, (child, parent, negative) = setting(ball, seed=11)
    margin = MARGINS[ball][1]
    got = HyperbolicCentripetalLoss(manifold, margin)(child, parent, negative)
    want = oracle_centri(child, parent, curvature(manifold), margin)
    assert _allclose(values(got), values(want), rtol=RTOL, atol=ATOL), (float(got), float(want))


@pytest.mark.parametrize("ball", list(BALLS))
def test_centripetal_loss_gradients_equal_the_oracle(ball):
    manifold, inputs = setting(ball, seed=12)
    margin = MARGINS[ball][1]
    got = torch.autograd.grad(HyperbolicCentripetalLoss(manifold, margin)(*inputs), inputs[:2], allow_unused=True)
    want = torch.autograd.grad(oracle_centri(inputs[0], inputs[1], curvature(manifold), margin), inputs[:2])
    for name, g, w in zip(("child", "parent"), got, want):
        assert g is not None, name
        assert _allclose(values(g), values(w), rtol=1e-3, atol=ATOL), name


def test_centripetal_loss_ignores_the_negatives():
    manifold, (child, parent, negative) = setting("circum-16", seed=13)
    loss = HyperbolicCentripetalLoss(manifold, 0.5)
    other = leaf(ball_points(torch.Generator().manual_seed(99), 8, 16, 1 / 16, 0.05, 0.9))
    assert _allclose(values(loss(child, parent, negative)), values(loss(child, parent, other)), rtol=0, atol=1e-6)


def test_centripetal_loss_is_a_batch_mean():
    manifold, (child, parent, negative) = setting("circum-8", seed=14, n=5)
    loss = HyperbolicCentripetalLoss(manifold, 1.0)
    once = loss(child, parent, negative)
    twice = loss(torch.cat([child, child]), torch.cat([parent, parent]), torch.cat([negative, negative]))
    single = [loss(child[i : i + 1], parent[i : i + 1], negative[i : i + 1]) for i in range(5)]
    assert _allclose(values(twice), values(once), rtol=RTOL, atol=ATOL)
    assert _allclose(values(once), np.mean([values(s) for s in single]), rtol=RTOL, atol=ATOL)


def test_centripetal_loss_vanishes_when_parents_are_nearer_the_origin_by_the_margin():
    manifold = get_circum_poincareball(16)
    gen = torch.Generator().manual_seed(15)
    child = ball_points(gen, 6, 16, 1 / 16, 0.8, 0.9)
    parent, negative = leaf(child * 0.3), leaf(ball_points(gen, 6, 16, 1 / 16, 0.05, 0.9))
    child = leaf(child)
    loss = HyperbolicCentripetalLoss(manifold, 0.5)(child, parent, negative)
    grads = torch.autograd.grad(loss, [child, parent], allow_unused=True)
    assert float(loss) == 0.0
    assert all(g is None or float(g.abs().max()) == 0.0 for g in grads)


def test_centripetal_margin_adds_to_an_active_loss():
    manifold, (child, parent, negative) = setting("circum-16", seed=16)
    small = HyperbolicCentripetalLoss(manifold, 40.0)(child, parent, negative)
    large = HyperbolicCentripetalLoss(manifold, 41.25)(child, parent, negative)
    assert _allclose(values(large) - values(small), 1.25, rtol=RTOL, atol=1e-4)


def test_centripetal_loss_is_a_differentiable_scalar():
    manifold, inputs = setting("unit-ball", seed=17)
    loss = HyperbolicCentripetalLoss(manifold, 0.1)(*inputs)
    assert isinstance(loss, torch.Tensor) and loss.dim() == 0
    assert loss.requires_grad


# ------------------------------------------------------------ HierarchyTransformerLoss


@pytest.fixture(scope="module")
def model():
    return tiny_hit.make_model(seed=1)


def embeddings(model):
    return [model(f)["sentence_embedding"] for f in tiny_hit.features(model)]


def test_hit_loss_returns_the_combined_and_both_component_losses(model):
    out = HierarchyTransformerLoss(model)(tiny_hit.features(model), None)
    assert isinstance(out, dict)
    for key in ("loss", "cluster_loss", "centri_loss"):
        assert isinstance(out[key], torch.Tensor) and out[key].dim() == 0, key


def test_hit_loss_components_equal_the_oracle_on_the_encoder_embeddings(model):
    out = HierarchyTransformerLoss(model, clustering_loss_margin=3.0, centripetal_loss_margin=0.8)(tiny_hit.features(model), None)
    child, parent, negative = embeddings(model)
    c = curvature(model.manifold)
    assert _allclose(values(out["cluster_loss"]), values(oracle_cluster(child, parent, negative, c, 3.0)), rtol=RTOL, atol=ATOL)
    assert _allclose(values(out["centri_loss"]), values(oracle_centri(child, parent, c, 0.8)), rtol=RTOL, atol=ATOL)


def test_hit_loss_is_the_weighted_sum_of_its_components(model):
    out = HierarchyTransformerLoss(model, clustering_loss_weight=0.3, centripetal_loss_weight=2.5)(tiny_hit.features(model), None)
    child, parent, negative = embeddings(model)
    c = curvature(model.manifold)
    want = 0.3 * oracle_cluster(child, parent, negative, c, 5.0) + 2.5 * oracle_centri(child, parent, c, 0.5)
    assert _allclose(values(out["loss"]), values(want), rtol=RTOL, atol=ATOL)


def test_hit_loss_gradients_reach_the_encoder_as_the_oracle_says(model):
    params = [p for p in model.parameters() if p.requires_grad]
    loss = HierarchyTransformerLoss(model, clustering_loss_weight=0.7, centripetal_loss_weight=1.3, centripetal_loss_margin=1.0)
    got = torch.autograd.grad(loss(tiny_hit.features(model), None)["loss"], params, allow_unused=True)
    child, parent, negative = embeddings(model)
    c = curvature(model.manifold)
    target = 0.7 * oracle_cluster(child, parent, negative, c, 5.0) + 1.3 * oracle_centri(child, parent, c, 1.0)
    want = torch.autograd.grad(target, params, allow_unused=True)
    scale = max(float(w.abs().max()) for w in want if w is not None)
    assert scale > 0
    for g, w in zip(got, want):
        if w is None:
            continue
        assert g is not None
        assert _allclose(values(g), values(w), rtol=1e-3, atol=1e-5 * scale)
