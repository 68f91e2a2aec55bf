"""Generator for fixtures/info_nce_cases.json: the reference SimCLR.info_nce_loss on batches we make.

Run by the toolkit (or by hand) with the current directory at the root of the task's
reference tree and LMR_FIXTURES_OUT naming the output folder. Why a generator and not a
driver: the method reads everything but `features` from `self.args`, a namespace object
(argparse.Namespace in run.py), and `lmr record` cannot store such an object as part of
`self`; this script stores the four values the method reads instead.

Each case is a batch as SimCLR.train builds it: `features` has n_views * batch_size rows,
view-major (rows 0..B-1 are the first view of images 0..B-1, rows B..2B-1 the second view
of the same images), one row per projection-head output. Feature values are float32
numbers drawn with Python's `random` (so the inputs are the same on every machine). The
expected logits are the reference run on those same values in float64, written with 10
significant digits, so that the file does not depend on float32 rounding in a BLAS kernel;
the tests feed float32 features to the code under test and compare within a tolerance.
The SimCLR object is made without its constructor (which opens a TensorBoard writer and
configures logging to a file): only `args` is set on it, as in the tests.
"""
import json
import os
import random
import struct
import sys
import types

import torch

random.seed(0)
torch.manual_seed(0)

sys.path.insert(0, os.getcwd())
from simclr import SimCLR  # noqa: E402

OUTPUT = "fixtures/info_nce_cases.json"


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def gaussian_rows(rng, n, d, scale=1.0):
    return [[f32(rng.gauss(0.0, scale)) for _ in range(d)] for _ in range(n)]


def two_views(rng, batch_size, d, noise):
    """Second view = first view plus noise: the positives of a partly trained encoder."""
    first = gaussian_rows(rng, batch_size, d)
    second = [[f32(v + rng.gauss(0.0, noise)) for v in row] for row in first]
    return first + second


def cases():
    rng = random.Random(2002_05709)
    out = []

    def add(name, batch_size, temperature, features):
        assert len(features) == 2 * batch_size
        out.append({"name": name, "batch_size": batch_size, "n_views": 2, "temperature": temperature, "features": features})

    add("one-image", 1, 0.07, gaussian_rows(rng, 2, 8))
    add("two-images-t0.5", 2, 0.5, gaussian_rows(rng, 4, 4))
    add("three-images-t1", 3, 1.0, gaussian_rows(rng, 6, 16))
    add("four-images-out-dim-128", 4, 0.07, gaussian_rows(rng, 8, 128))
    add("five-images-close-views", 5, 0.1, two_views(rng, 5, 3, 0.05))
    rows = gaussian_rows(rng, 12, 5)
    scales = [0.01, 0.3, 1.0, 2.5, 7.0, 40.0, 100.0, 0.05, 3.0, 0.8, 15.0, 0.2]
    add("six-images-unnormalised-rows", 6, 0.2, [[f32(v * s) for v in row] for row, s in zip(rows, scales)])
    dup = two_views(rng, 8, 32, 0.3)
    dup[5], dup[13] = list(dup[2]), list(dup[10])  # image 5 is image 2 again (both views): tied similarities
    add("eight-images-duplicate-image", 8, 0.07, dup)
    add("sixteen-images-t0.5", 16, 0.5, two_views(rng, 16, 16, 0.5))
    return out


def run(case):
    model = object.__new__(SimCLR)
    model.args = types.SimpleNamespace(
        batch_size=case["batch_size"], n_views=case["n_views"], temperature=case["temperature"], device=torch.device("cpu")
    )
    features = torch.tensor(case["features"], dtype=torch.float64)
    logits, labels = model.info_nce_loss(features)
    assert labels.dtype == torch.long
    case = dict(case)
    case["logits"] = [[float("%.10g" % v) for v in row] for row in logits.tolist()]
    case["labels"] = labels.tolist()
    return case


def main():
    doc = {
        "format": "simclr-info-nce-cases/1",
        "about": "SimCLR.info_nce_loss (simclr.py) of the reference on float32 feature batches; logits computed in float64, 10 significant digits",
        "cases": [run(c) for c in cases()],
    }
    path = os.path.join(os.environ["LMR_FIXTURES_OUT"], OUTPUT)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
