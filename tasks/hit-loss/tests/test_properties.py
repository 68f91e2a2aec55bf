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

The losses run in the candidate process (lmr_bridge): the probes below build the loss modules
there (the balls through the workspace's get_circum_poincareball or geoopt's PoincareBall, the
encoder through tiny_hit.make_model), call them on inputs chosen here, and send back values and
gradients. Every expected value is computed in this process: the curvature from geoopt's
PoincareBall of the same c, and, for HierarchyTransformerLoss, the encoder's embeddings and
parameter gradients from the same seeded tiny BERT, loaded here with transformers and
mean-pooled as HierarchyTransformer's sentence encoder pools (this process never imports the
workspace).
"""
import math

import numpy as np
import pytest
import torch
from geoopt.manifolds import PoincareBall
from lmr_bridge import probe, probe_helper

import tiny_hit

_allclose = np.allclose

RTOL = 1e-4
ATOL = 1e-5


# ------------------------------------------------------------------------- the oracle


def curvature(ball):
    """The curvature of the ball a spec names, as geoopt stores it (get_circum_poincareball(d) is PoincareBall(c=1/d))."""
    value = 1.0 / ball["value"] if ball["kind"] == "circum" else ball["value"]
    return float(PoincareBall(c=value).c)


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


# ------------------------------------------------------------------------- the candidate


@probe_helper
def make_ball(ball):
    """In the candidate: the ball a spec names ({"kind": "circum", "value": dim} or {"kind": "unit", "value": c})."""
    if ball["kind"] == "circum":
        from hierarchy_transformers.models.hierarchy_transformer.hyperbolic import get_circum_poincareball

        return get_circum_poincareball(ball["value"])
    from geoopt.manifolds import PoincareBall

    return PoincareBall(c=ball["value"])


@probe
def sub_losses(kind, ball, calls):
    """In the candidate: HyperbolicClusteringLoss or HyperbolicCentripetalLoss (`kind`) on the
    ball, once per call {"margin", "inputs": [child, parent, negative], "grads": bool}: the loss
    as returned, its gradients with respect to the three inputs (None where unused; asked for
    only where `grads`), and the inputs as they are after the call."""
    from hierarchy_transformers.losses.hit_loss import HyperbolicCentripetalLoss, HyperbolicClusteringLoss

    cls = HyperbolicClusteringLoss if kind == "cluster" else HyperbolicCentripetalLoss
    manifold = make_ball(ball)
    out = []
    for call in calls:
        inputs = [t.detach().clone().float().requires_grad_(True) for t in call["inputs"]]
        loss = cls(manifold, call["margin"])(*inputs)
        grads = list(torch.autograd.grad(loss, inputs, allow_unused=True)) if call["grads"] else None
        out.append({"loss": loss, "grads": grads, "after": [t.detach() for t in inputs]})
    return out


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


# (ball, dim, points' Euclidean norms as fractions of the radius)
BALLS = {
    "circum-16": ({"kind": "circum", "value": 16}, 16, 0.05, 0.9),
    "circum-8": ({"kind": "circum", "value": 8}, 8, 0.1, 0.7),
    "circum-64-near-boundary": ({"kind": "circum", "value": 64}, 64, 0.6, 0.97),
    "unit-ball": ({"kind": "unit", "value": 1.0}, 5, 0.05, 0.9),
}
MARGINS = {"circum-16": (5.0, 0.5), "circum-8": (1.5, 1.0), "circum-64-near-boundary": (3.0, 2.0), "unit-ball": (0.3, 0.1)}


def setting(name, seed=0, n=8):
    ball, dim, low, high = BALLS[name]
    return ball, triplet(seed, n, dim, curvature(ball), low, high)


def one(kind, ball, margin, inputs, grads=False):
    """The loss module's answer for one call, in the candidate."""
    return sub_losses(kind, ball, [{"margin": margin, "inputs": list(inputs), "grads": grads}])[0]


def loss_of(kind, ball, margin, inputs):
    return one(kind, ball, margin, inputs)["loss"]


def gradients_of(kind, ball, margin, inputs):
    return one(kind, ball, margin, inputs, grads=True)["grads"]


def circum(dim):
    return {"kind": "circum", "value": dim}


# ------------------------------------------------------------------- clustering loss


@pytest.mark.parametrize("ball", list(BALLS))
def test_clustering_loss_equals_the_oracle(ball):
    spec, (child, parent, negative) = setting(ball, seed=1)
    margin = MARGINS[ball][0]
    got = loss_of("cluster", spec, margin, [child, parent, negative])
    want = oracle_cluster(child, parent, negative, curvature(spec), margin)
    assert _allclose(values(got), values(want), rtol=RTOL, atol=ATOL), (float(got), float(want))


@pytest.mark.parametrize("ball", list(BALLS))
def test_clustering_loss_gradients_equal_the_oracle(ball):
    spec, inputs = setting(ball, seed=2)
    margin = MARGINS[ball][0]
    got = gradients_of("cluster", spec, margin, inputs)
    want = torch.autograd.grad(oracle_cluster(*inputs, curvature(spec), margin), inputs)
    for name, g, w in zip(("child", "parent", "negative"), got, want):
        assert g is not None, name
        assert _allclose(values(g), values(w), rtol=1e-3, atol=ATOL), name


def test_clustering_loss_is_a_batch_mean():
    spec, (child, parent, negative) = setting("circum-16", seed=3, n=5)
    calls = [[child, parent, negative], [torch.cat([child, child]), torch.cat([parent, parent]), torch.cat([negative, negative])]]
    calls += [[child[i : i + 1], parent[i : i + 1], negative[i : i + 1]] for i in range(5)]
    got = [r["loss"] for r in sub_losses("cluster", spec, [{"margin": 5.0, "inputs": c, "grads": False} for c in calls])]
    once, twice, single = got[0], got[1], got[2:]
    assert _allclose(values(twice), values(once), rtol=RTOL, atol=ATOL)
    assert _allclose(values(once), np.mean([values(s) for s in single]), rtol=RTOL, atol=ATOL)


def test_clustering_loss_vanishes_when_every_negative_is_farther_by_the_margin():
    gen = torch.Generator().manual_seed(4)
    child = ball_points(gen, 6, 16, 1 / 16, 0.4, 0.6)
    parent, negative = leaf(child * 0.9), leaf(-child)
    child = leaf(child)
    got = one("cluster", circum(16), 0.5, [child, parent, negative], grads=True)
    assert float(got["loss"]) == 0.0
    assert all(g is None or float(g.abs().max()) == 0.0 for g in got["grads"])


def test_clustering_margin_adds_to_an_active_loss():
    spec, inputs = setting("circum-16", seed=5)
    small, large = (r["loss"] for r in sub_losses("cluster", spec, [{"margin": m, "inputs": inputs, "grads": False} for m in (20.0, 22.5)]))
    assert _allclose(values(large) - values(small), 2.5, rtol=RTOL, atol=1e-4)


def test_clustering_loss_is_a_differentiable_scalar():
    # the loss tensor as returned (its dimension and requires_grad travel with it)
    spec, inputs = setting("circum-8", seed=6)
    loss = loss_of("cluster", spec, 1.5, inputs)
    assert isinstance(loss, torch.Tensor) and loss.dim() == 0
    assert loss.requires_grad


def test_clustering_loss_leaves_its_inputs_unchanged():
    # the candidate reports the input tensors after the call; they must hold what was sent
    spec, inputs = setting("circum-16", seed=7)
    before = [values(t).copy() for t in inputs]
    after = one("cluster", spec, 5.0, inputs)["after"]
    assert len(after) == 3
    assert all(np.array_equal(values(t), b) for t, b in zip(after, before))


# ------------------------------------------------------------------- centripetal loss


@pytest.mark.parametrize("ball", list(BALLS))
def test_centripetal_loss_equals_the_oracle(ball):
    spec, (child, parent, negative) = setting(ball, seed=11)
    margin = MARGINS[ball][1]
    got = loss_of("centri", spec, margin, [child, parent, negative])
    want = oracle_centri(child, parent, curvature(spec), margin)
    assert _allclose(values(got), values(want), rtol=RTOL, atol=ATOL), (float(got), float(want))


@pytest.mark.parametrize("ball", list(BALLS))
def test_centripetal_loss_gradients_equal_the_oracle(ball):
    spec, inputs = setting(ball, seed=12)
    margin = MARGINS[ball][1]
    got = gradients_of("centri", spec, margin, inputs)[:2]
    want = torch.autograd.grad(oracle_centri(inputs[0], inputs[1], curvature(spec), margin), inputs[:2])
    for name, g, w in zip(("child", "parent"), got, want):
        assert g is not None, name
        assert _allclose(values(g), values(w), rtol=1e-3, atol=ATOL), name


def test_centripetal_loss_ignores_the_negatives():
    spec, (child, parent, negative) = setting("circum-16", seed=13)
    other = leaf(ball_points(torch.Generator().manual_seed(99), 8, 16, 1 / 16, 0.05, 0.9))
    a, b = (r["loss"] for r in sub_losses("centri", spec, [{"margin": 0.5, "inputs": [child, parent, n], "grads": False} for n in (negative, other)]))
    assert _allclose(values(a), values(b), rtol=0, atol=1e-6)


def test_centripetal_loss_is_a_batch_mean():
    spec, (child, parent, negative) = setting("circum-8", seed=14, n=5)
    calls = [[child, parent, negative], [torch.cat([child, child]), torch.cat([parent, parent]), torch.cat([negative, negative])]]
    calls += [[child[i : i + 1], parent[i : i + 1], negative[i : i + 1]] for i in range(5)]
    got = [r["loss"] for r in sub_losses("centri", spec, [{"margin": 1.0, "inputs": c, "grads": False} for c in calls])]
    once, twice, single = got[0], got[1], got[2:]
    assert _allclose(values(twice), values(once), rtol=RTOL, atol=ATOL)
    assert _allclose(values(once), np.mean([values(s) for s in single]), rtol=RTOL, atol=ATOL)


def test_centripetal_loss_vanishes_when_parents_are_nearer_the_origin_by_the_margin():
    gen = torch.Generator().manual_seed(15)
    child = ball_points(gen, 6, 16, 1 / 16, 0.8, 0.9)
    parent, negative = leaf(child * 0.3), leaf(ball_points(gen, 6, 16, 1 / 16, 0.05, 0.9))
    child = leaf(child)
    got = one("centri", circum(16), 0.5, [child, parent, negative], grads=True)
    assert float(got["loss"]) == 0.0
    assert all(g is None or float(g.abs().max()) == 0.0 for g in got["grads"][:2])


def test_centripetal_margin_adds_to_an_active_loss():
    spec, inputs = setting("circum-16", seed=16)
    small, large = (r["loss"] for r in sub_losses("centri", spec, [{"margin": m, "inputs": inputs, "grads": False} for m in (40.0, 41.25)]))
    assert _allclose(values(large) - values(small), 1.25, rtol=RTOL, atol=1e-4)


def test_centripetal_loss_is_a_differentiable_scalar():
    spec, inputs = setting("unit-ball", seed=17)
    loss = loss_of("centri", spec, 0.1, inputs)
    assert isinstance(loss, torch.Tensor) and loss.dim() == 0
    assert loss.requires_grad


# ------------------------------------------------------------ HierarchyTransformerLoss


@probe
def hit_loss(seed, options, features, with_parameter_gradients):
    """In the candidate: HierarchyTransformerLoss(options) over tiny_hit.make_model(seed) on the
    three feature columns: what forward returns, and (if asked) the gradients of its "loss"
    with respect to the encoder's parameters, by parameter name (None where unused)."""
    from hierarchy_transformers.losses.hit_loss import HierarchyTransformerLoss

    model = tiny_hit.make_model(seed=seed)
    out = HierarchyTransformerLoss(model, **options)([dict(f) for f in features], None)
    result = {"out": out, "grads": None}
    if with_parameter_gradients:
        named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
        grads = torch.autograd.grad(out["loss"], [p for _, p in named], allow_unused=True)
        result["grads"] = {name: g for (name, _), g in zip(named, grads)}
    return result


# the encoder's BERT inside HierarchyTransformer: the sentence encoder's first module holds it as auto_model
ENCODER_PREFIX = "0.auto_model."


@pytest.fixture(scope="module")
def model():
    """Here: the BERT and tokenizer tiny_hit.make_model(seed=1) loads in the candidate (the same
    seeded folder), loaded with transformers, and the tokenised triplet columns."""
    from transformers import AutoModel, AutoTokenizer

    folder = tiny_hit.model_dir(seed=1)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    bert = AutoModel.from_pretrained(folder)
    bert.eval()
    features = [dict(tokenizer([str(t).strip() for t in column], padding=True, truncation="longest_first", return_tensors="pt")) for column in zip(*tiny_hit.TRIPLETS)]
    return {"bert": bert, "features": features}


def embeddings(model):
    """Mean pooling of the BERT's last hidden states over the real tokens, per column (child, parent, negative)."""
    out = []
    for f in model["features"]:
        hidden = model["bert"](**f)[0]
        mask = f["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        out.append((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9))
    return out


def hit_curvature():
    return curvature(circum(16))  # the tiny encoder's 16-dimensional outputs: the ball of curvature 1/16


def test_hit_loss_returns_the_combined_and_both_component_losses(model):
    out = hit_loss(1, {}, model["features"], False)["out"]
    assert isinstance(out, dict)
    for key in ("loss", "cluster_loss", "centri_loss"):
        assert isinstance(out[key], torch.Tensor) and out[key].dim() == 0, key


def test_hit_loss_components_equal_the_oracle_on_the_encoder_embeddings(model):
    out = hit_loss(1, {"clustering_loss_margin": 3.0, "centripetal_loss_margin": 0.8}, model["features"], False)["out"]
    child, parent, negative = embeddings(model)
    c = hit_curvature()
    assert _allclose(values(out["cluster_loss"]), values(oracle_cluster(child, parent, negative, c, 3.0)), rtol=RTOL, atol=ATOL)
    assert _allclose(values(out["centri_loss"]), values(oracle_centri(child, parent, c, 0.8)), rtol=RTOL, atol=ATOL)


def test_hit_loss_is_the_weighted_sum_of_its_components(model):
    out = hit_loss(1, {"clustering_loss_weight": 0.3, "centripetal_loss_weight": 2.5}, model["features"], False)["out"]
    child, parent, negative = embeddings(model)
    c = hit_curvature()
    want = 0.3 * oracle_cluster(child, parent, negative, c, 5.0) + 2.5 * oracle_centri(child, parent, c, 0.5)
    assert _allclose(values(out["loss"]), values(want), rtol=RTOL, atol=ATOL)


def test_hit_loss_gradients_reach_the_encoder_as_the_oracle_says(model):
    options = {"clustering_loss_weight": 0.7, "centripetal_loss_weight": 1.3, "centripetal_loss_margin": 1.0}
    got = hit_loss(1, options, model["features"], True)["grads"]
    params = [(name, p) for name, p in model["bert"].named_parameters() if p.requires_grad]
    assert set(got) == {ENCODER_PREFIX + name for name, _ in params}
    child, parent, negative = embeddings(model)
    c = hit_curvature()
    target = 0.7 * oracle_cluster(child, parent, negative, c, 5.0) + 1.3 * oracle_centri(child, parent, c, 1.0)
    want = torch.autograd.grad(target, [p for _, p in params], allow_unused=True)
    scale = max(float(w.abs().max()) for w in want if w is not None)
    assert scale > 0
    for (name, _), w in zip(params, want):
        if w is None:
            continue
        g = got[ENCODER_PREFIX + name]
        assert g is not None, name
        assert _allclose(values(g), values(w), rtol=1e-3, atol=1e-5 * scale), name
