"""Generator of fixtures/hit_cases.json: the reference HiT losses on seeded inputs.

`lmr record` cannot record these targets from a driver: every call's `self` holds a
geoopt PoincareBall (an nn.Module the recorder cannot store) and HierarchyTransformerLoss
holds a whole sentence encoder. So this script calls the reference itself and writes what
the replay tests (tests/test_replay.py) need to rebuild each call through the public
constructors: the curvature, the margins and weights, the input points, and the reference's
loss values and input gradients.

Sub-loss cases: triplets of points in the Poincare ball of each manifold, as
HierarchyTransformerLoss.forward passes them (batch x dim, float32, requiring grad): the
ball HiT uses (curvature 1/d, get_circum_poincareball) for d = 8, 16, 32, and the unit ball,
points from near the origin to near the boundary, the upstream's default margins and others,
a batch of one, and arrangements where the hinges are mostly inactive or mostly active.
Full-loss cases: the tiny seeded encoder of tests/tiny_hit.py on its triplets, with the
default weights and margins and others.

Runs from the root of the reference tree after tests/conftest.py (src/ and tests/ on
sys.path); writes only $LMR_FIXTURES_OUT/fixtures/hit_cases.json. Seeded here; floats
written as Python's repr (inputs: float32 values, exact), outputs rounded to 7 significant
digits so that last-bit differences between CPUs rarely show.
"""
import json
import math
import os
import random

import numpy as np
import torch

random.seed(0)
np.random.seed(0)
torch.manual_seed(0)

from geoopt.manifolds import PoincareBall  # noqa: E402

import tiny_hit  # noqa: E402  (tests/, put on sys.path by tests/conftest.py)
from hierarchy_transformers.losses.hit_loss import (  # noqa: E402
    HierarchyTransformerLoss,
    HyperbolicCentripetalLoss,
    HyperbolicClusteringLoss,
)
from hierarchy_transformers.models.hierarchy_transformer.hyperbolic import get_circum_poincareball  # noqa: E402

gen = torch.Generator().manual_seed(1234)


def r7(x):
    return float("%.7g" % float(x))


def rounded(t):
    return [r7(v) for v in t.detach().reshape(-1).tolist()]


def ball_points(n, dim, c, low, high):
    """n points in the ball of curvature c, Euclidean norms uniform in [low, high] x radius."""
    radius = 1.0 / math.sqrt(c)
    direction = torch.randn(n, dim, generator=gen)
    direction = direction / direction.norm(dim=-1, keepdim=True)
    scale = low + (high - low) * torch.rand(n, 1, generator=gen)
    return direction * scale * radius


def manifold_for(spec):
    kind, value = spec
    return get_circum_poincareball(value) if kind == "circum" else PoincareBall(c=value)


def sub_case(name, manifold_spec, alpha, beta, child, parent, negative):
    manifold = manifold_for(manifold_spec)
    inputs = [t.detach().clone().float().requires_grad_(True) for t in (child, parent, negative)]
    cluster = HyperbolicClusteringLoss(manifold, alpha)(*inputs)
    g_cluster = torch.autograd.grad(cluster, inputs)
    inputs2 = [t.detach().clone().requires_grad_(True) for t in inputs]
    centri = HyperbolicCentripetalLoss(manifold, beta)(*inputs2)
    g_centri = torch.autograd.grad(centri, inputs2[:2])
    return {
        "name": name,
        "manifold": {"kind": manifold_spec[0], "value": manifold_spec[1]},
        "c": float(manifold.c),
        "clustering_margin": alpha,
        "centripetal_margin": beta,
        "shape": list(inputs[0].shape),
        "child": inputs[0].detach().reshape(-1).tolist(),
        "parent": inputs[1].detach().reshape(-1).tolist(),
        "negative": inputs[2].detach().reshape(-1).tolist(),
        "cluster_loss": r7(cluster),
        "cluster_grad": {k: rounded(g) for k, g in zip(("child", "parent", "negative"), g_cluster)},
        "centri_loss": r7(centri),
        "centri_grad": {k: rounded(g) for k, g in zip(("child", "parent"), g_centri)},
    }


sub_cases = []
random_cases = [
    # (name, manifold, dim, clustering margin, centripetal margin, batch, low, high)
    ("circum16-defaults", ("circum", 16), 16, 5.0, 0.5, 6, 0.05, 0.9),
    ("circum16-small-margins", ("circum", 16), 16, 1.0, 0.1, 5, 0.3, 0.95),
    ("circum8", ("circum", 8), 8, 2.0, 1.0, 7, 0.05, 0.6),
    ("circum32-near-boundary", ("circum", 32), 32, 5.0, 0.5, 4, 0.5, 0.98),
    ("unit-ball", ("unit", 1.0), 4, 0.1, 0.2, 6, 0.05, 0.9),
    ("unit-ball-batch-of-one", ("unit", 1.0), 4, 3.0, 0.0, 1, 0.1, 0.8),
]
for name, spec, dim, alpha, beta, n, low, high in random_cases:
    c = float(manifold_for(spec).c)
    child, parent, negative = (ball_points(n, dim, c, low, high) for _ in range(3))
    sub_cases.append(sub_case(name, spec, alpha, beta, child, parent, negative))

# children far out, parents near the origin on the same rays, negatives on the far side
child = ball_points(5, 16, 1 / 16, 0.85, 0.95)
sub_cases.append(sub_case("ordered", ("circum", 16), 5.0, 0.5, child, child * 0.2, -child))
# the opposite: parents farther from the origin than their children, negatives near them
sub_cases.append(sub_case("reversed", ("circum", 16), 5.0, 0.5, child * 0.2, child, child * 0.25))

full_cases = []
model = tiny_hit.make_model(seed=0)
features = tiny_hit.features(model)
for weights in [(1.0, 5.0, 1.0, 0.5), (0.3, 2.0, 2.0, 1.0), (1.5, 0.5, 0.0, 0.5), (0.0, 5.0, 0.7, 3.0)]:
    w_cluster, m_cluster, w_centri, m_centri = weights
    loss = HierarchyTransformerLoss(
        model,
        clustering_loss_weight=w_cluster,
        clustering_loss_margin=m_cluster,
        centripetal_loss_weight=w_centri,
        centripetal_loss_margin=m_centri,
    )
    out = loss(features, None)
    full_cases.append(
        {
            "model_seed": 0,
            "clustering_loss_weight": w_cluster,
            "clustering_loss_margin": m_cluster,
            "centripetal_loss_weight": w_centri,
            "centripetal_loss_margin": m_centri,
            "loss": r7(out["loss"]),
            "cluster_loss": r7(out["cluster_loss"]),
            "centri_loss": r7(out["centri_loss"]),
        }
    )

doc = {
    "about": "reference values of the HiT losses; written by generators/hit_cases.py",
    "sub_loss_cases": sub_cases,
    "full_loss_cases": full_cases,
    "triplets": [list(t) for t in tiny_hit.TRIPLETS],
}
out_dir = os.path.join(os.environ["LMR_FIXTURES_OUT"], "fixtures")
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "hit_cases.json"), "w", encoding="utf-8") as f:
    f.write(json.dumps(doc, sort_keys=True, indent=1) + "\n")
