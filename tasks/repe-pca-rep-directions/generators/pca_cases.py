"""Generator for fixtures/pca_cases.json: the reference PCARepReader.get_rep_directions on states we make.

Run by the toolkit (or by hand) with the current directory at the root of the task's
reference tree, after the grader's tests/conftest.py (which makes Tensor.cuda() a no-op
on a machine without CUDA and puts repe/ on sys.path), and with LMR_FIXTURES_OUT naming
the output folder. A generator and not a driver: the tests load repe/rep_readers.py as
the module `rep_readers` (repe/__init__.py imports the transformers pipelines), while
`lmr record` wraps the target under its package name, `repe.rep_readers`.

Each case is what RepReadingPipeline.get_directions hands the reader: per layer, a
float32 array of the differences between the two last-token hidden states of each
contrastive pair (n_difference = 1), the pairs in shuffled order as the upstream's
examples build them; one case passes raw states instead (n_difference = 0), and one
makes the reader with n_components=None (every component; more pairs than dimensions).
The states are synthetic, drawn with Python's `random` so that they are the same on every machine:
a large shared offset, per-pair content, a few concept directions of distinct strengths
along which the two members of a pair differ, and noise.

The expected outputs are the reference run on those same values with torch's default
tensor type set to float64 (the reference recenters through torch.Tensor, float32 by
default), written with 10 significant digits, so that the file does not depend on a
float32 LAPACK kernel; the tests feed float32 states and compare within a tolerance.
PCA leaves each direction's sign open: the tests compare directions up to sign.
"""
import json
import math
import os
import random
import struct
import sys

import numpy as np
import torch

random.seed(0)
np.random.seed(0)
torch.manual_seed(0)

sys.path.insert(0, os.path.join(os.getcwd(), "repe"))
from rep_readers import PCARepReader  # noqa: E402

OUTPUT = "fixtures/pca_cases.json"


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def orthonormal(rng, k, d):
    basis = []
    while len(basis) < k:
        v = [rng.gauss(0.0, 1.0) for _ in range(d)]
        for b in basis:
            dot = sum(x * y for x, y in zip(v, b))
            v = [x - dot * y for x, y in zip(v, b)]
        norm = math.sqrt(sum(x * x for x in v))
        if norm > 1e-3:
            basis.append([x / norm for x in v])
    return basis


def pair_states(rng, d, n_pairs, strengths, means=None, noise=0.2, offset_norm=30.0, shuffle=True):
    """2 * n_pairs rows: pair i is rows 2i and 2i + 1, differing along the concept directions."""
    k = len(strengths)
    means = means or [0.0] * k
    concepts = orthonormal(rng, k, d)
    offset = [rng.gauss(0.0, 1.0) for _ in range(d)]
    scale = offset_norm / math.sqrt(sum(x * x for x in offset))
    rows = []
    for _ in range(n_pairs):
        base = [scale * o + rng.gauss(0.0, 1.0) for o in offset]
        coef = [rng.gauss(m, s) for m, s in zip(means, strengths)]
        shift = [sum(0.5 * c * u[j] for c, u in zip(coef, concepts)) for j in range(d)]
        first = [f32(b + s + rng.gauss(0.0, noise)) for b, s in zip(base, shift)]
        second = [f32(b - s + rng.gauss(0.0, noise)) for b, s in zip(base, shift)]
        if shuffle and rng.random() < 0.5:
            first, second = second, first
        rows += [first, second]
    return rows


def differences(rows):
    """relative_hidden_states of the pipeline: rows[::2] - rows[1::2], in float32."""
    return [[f32(a - b) for a, b in zip(rows[i], rows[i + 1])] for i in range(0, len(rows), 2)]


def cases():
    rng = random.Random(2310_01405)
    out = []

    def add(name, n_components, hidden_layers, states, dtype="float32"):
        out.append({"name": name, "n_components": n_components, "hidden_layers": hidden_layers,
                    "dtype": dtype, "hidden_states": {str(layer): rows for layer, rows in states.items()}})

    add("one-component-three-layers", 1, [-1, -2, -3],
        {layer: differences(pair_states(rng, 48, 32, [1.5 + 0.5 * i])) for i, layer in enumerate([-1, -2, -3])})
    add("three-components", 3, [-1, -4],
        {layer: differences(pair_states(rng, 24, 40, [4.0, 2.5, 1.5])) for layer in [-1, -4]})
    add("pairs-in-fixed-order", 2, [-2],
        {-2: differences(pair_states(rng, 16, 30, [0.3, 2.0], means=[3.0, 0.0], shuffle=False))})
    add("few-pairs-wide-states", 2, [-1, -8, -16],
        {layer: differences(pair_states(rng, 96, 8, [5.0, 2.0], noise=0.1)) for layer in [-1, -8, -16]})
    add("subset-of-layers", 1, [-4, -2],
        {layer: differences(pair_states(rng, 20, 25, [2.0])) for layer in [-1, -2, -3, -4]})
    add("five-components-float64", 5, [10],
        {10: differences(pair_states(rng, 12, 60, [5.0, 4.0, 3.0, 2.0, 1.2]))}, dtype="float64")
    add("raw-states-n-difference-0", 2, [-1, -3],
        {layer: pair_states(rng, 32, 20, [6.0, 3.0], offset_norm=120.0) for layer in [-1, -3]})
    add("every-component-n-components-none", None, [-1, -2],
        {layer: differences(pair_states(rng, 6, 60, [6.0, 5.0, 4.0, 3.0, 2.0, 1.2], noise=0.1)) for layer in [-1, -2]})
    return out


def run(case):
    reader = PCARepReader(n_components=case["n_components"])
    states = {int(layer): np.array(rows, dtype=np.float64) for layer, rows in case["hidden_states"].items()}
    directions = reader.get_rep_directions(None, None, states, case["hidden_layers"], train_choices=None)
    digits = lambda a: [[float("%.10g" % v) for v in row] for row in np.asarray(a).tolist()]  # noqa: E731
    case = dict(case)
    case["directions"] = {str(layer): digits(directions[layer]) for layer in case["hidden_layers"]}
    case["H_train_means"] = {str(layer): digits(reader.H_train_means[layer]) for layer in case["hidden_layers"]}
    case["n_components_after"] = int(reader.n_components)
    return case


def main():
    torch.set_default_tensor_type(torch.DoubleTensor)
    doc = {
        "format": "repe-pca-cases/1",
        "about": "PCARepReader.get_rep_directions (repe/rep_readers.py) of the reference on float32 hidden-state differences; outputs computed in float64, 10 significant digits; directions are defined up to sign",
        "cases": [run(c) for c in cases()],
    }
    path = os.path.join(os.environ["LMR_FIXTURES_OUT"], OUTPUT)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
