"""Generator for fixtures/svdlinear_cases.json: SVDLinear layers in many configurations, run
through the reference forward pass.

Written for lmr (not upstream code). `lmr record` cannot record `SVDLinear.forward` as calls
(the layer's state lives in nn.Module parameters, and `lora_dropout` is a lambda when the
dropout rate is 0), so this script builds each layer itself and stores everything the replay
test needs to rebuild it: the constructor arguments, every parameter and flag *after* the
layer was put in its mode (so `eval()` with merge_weights=True has already merged the update
into `weight`), the input and the output of the reference forward pass.

Contract (lmr record.generators): run from the root of the task's reference tree (the upstream
at its commit with the reference target in place); writes only
$LMR_FIXTURES_OUT/fixtures/svdlinear_cases.json. Every source of randomness is seeded below and
every layer draws from its own seeded generator, so two runs give identical bytes.
"""
import json
import os
import random
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # leave the reference tree as it is: no __pycache__ from loralib

import numpy as np
import torch

random.seed(0)
np.random.seed(0)
torch.manual_seed(0)

# The package lives in loralib/loralib and is used as `import loralib` (after
# `pip install -e loralib`), as in the tests.
sys.path.insert(0, str(Path.cwd() / "loralib"))
from loralib.adalora import SVDLinear  # noqa: E402

OUTPUT = "fixtures/svdlinear_cases.json"

# name, layer arguments, mode ("train" or "eval"), input shape, extra state changes.
# (in, out, r, alpha, fan_in_fan_out, bias, dtype, dropout, merge_weights)
CASES = [
    ("r4-train-2d", (6, 5, 4, 8, False, True, "float64", 0.0, True), "train", (3, 6), {}),
    ("r1-train-2d", (6, 5, 1, 1, False, True, "float64", 0.0, True), "train", (4, 6), {}),
    ("r3-train-3d-fifo", (6, 4, 3, 2, True, True, "float64", 0.0, True), "train", (2, 3, 6), {}),
    ("r2-train-nobias", (5, 7, 2, 4, False, False, "float64", 0.0, True), "train", (4, 5), {}),
    ("r4-train-alpha0", (6, 5, 4, 0, False, True, "float64", 0.0, True), "train", (2, 6), {}),
    ("r4-train-ranknum", (6, 5, 4, 8, False, True, "float64", 0.0, True), "train", (3, 6), {"ranknum": 1.5}),
    ("r4-train-pruned", (6, 5, 4, 8, False, True, "float64", 0.0, True), "train", (3, 6), {"ranknum": 3.0, "prune": 1}),
    ("r2-train-batch1", (8, 3, 2, 16, False, True, "float64", 0.0, True), "train", (1, 8), {}),
    ("r2-train-1d", (8, 3, 2, 16, True, True, "float64", 0.0, True), "train", (8,), {}),
    ("r4-train-f32", (12, 10, 4, 8, False, True, "float32", 0.0, True), "train", (5, 12), {}),
    ("r3-train-f32-fifo", (10, 12, 3, 6, True, False, "float32", 0.0, True), "train", (2, 4, 10), {}),
    ("r4-evaldrop-unmerged", (6, 5, 4, 8, False, True, "float64", 0.3, False), "eval", (3, 6), {}),
    ("r2-evaldrop-unmerged-fifo", (6, 5, 2, 2, True, True, "float64", 0.5, False), "eval", (2, 2, 6), {}),
    ("r3-eval-unmerged-ranknum", (6, 5, 3, 4, False, True, "float64", 0.0, False), "eval", (4, 6), {"ranknum": 2.0}),
    ("r4-eval-merged", (6, 5, 4, 8, False, True, "float64", 0.0, True), "eval", (3, 6), {}),
    ("r3-evaldrop-merged-fifo", (6, 4, 3, 2, True, True, "float64", 0.2, True), "eval", (2, 3, 6), {}),
    ("r1-eval-merged-nobias", (5, 5, 1, 1, False, False, "float64", 0.0, True), "eval", (4, 5), {}),
    ("r4-eval-merged-f32", (12, 10, 4, 8, False, True, "float32", 0.1, True), "eval", (5, 12), {}),
    ("r0-train", (6, 5, 0, 1, False, True, "float64", 0.0, True), "train", (3, 6), {}),
    ("r0-train-fifo", (6, 5, 0, 1, True, True, "float64", 0.0, True), "train", (2, 3, 6), {}),
    ("r0-eval-nobias", (6, 5, 0, 1, False, False, "float64", 0.0, True), "eval", (3, 6), {}),
    ("r0-train-fifo-f32-1d", (7, 4, 0, 1, True, False, "float32", 0.0, True), "train", (7,), {}),
]


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def build_case(index, name, args, mode, x_shape, extra):
    fin, fout, r, alpha, fifo, bias, dtype_name, dropout, merge = args
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(1000 + index)  # W0 and b come from nn.Linear's own initialisation
    layer = SVDLinear(fin, fout, r=r, lora_alpha=alpha, lora_dropout=dropout, fan_in_fan_out=fifo,
                      merge_weights=merge, bias=bias).to(dtype)
    gen = torch.Generator().manual_seed(2000 + index)
    with torch.no_grad():
        if bias:
            layer.bias.copy_(torch.randn(fout, generator=gen, dtype=torch.float64).to(dtype) * 0.5)
        if r > 0:
            # Non-zero singular values: at initialisation lora_E is 0 and the update vanishes.
            layer.lora_A.copy_(torch.randn(r, fin, generator=gen, dtype=torch.float64).to(dtype) * 0.5)
            layer.lora_B.copy_(torch.randn(fout, r, generator=gen, dtype=torch.float64).to(dtype) * 0.5)
            layer.lora_E.copy_(torch.randn(r, 1, generator=gen, dtype=torch.float64).to(dtype))
            if "prune" in extra:
                layer.lora_E[extra["prune"], 0] = 0.0  # a triplet pruned by the rank allocator
            if "ranknum" in extra:
                layer.ranknum.fill_(extra["ranknum"])
    getattr(layer, mode)()  # eval() merges the update into weight when merge_weights is true
    x = torch.randn(*x_shape, generator=gen, dtype=torch.float64).to(dtype)
    with torch.no_grad():
        y = layer(x)
    state = {
        "weight": flat(layer.weight),
        "weight_shape": list(layer.weight.shape),
        "bias": flat(layer.bias) if bias else None,
        "merged": bool(layer.merged),
        "training": bool(layer.training),
    }
    if r > 0:
        state.update({
            "lora_A": flat(layer.lora_A),
            "lora_B": flat(layer.lora_B),
            "lora_E": flat(layer.lora_E),
            "ranknum": float(layer.ranknum.item()),
            "scaling": float(layer.scaling),
        })
    return {
        "name": name,
        "in_features": fin,
        "out_features": fout,
        "r": r,
        "lora_alpha": alpha,
        "fan_in_fan_out": fifo,
        "bias": bias,
        "dtype": dtype_name,
        "lora_dropout": dropout,
        "merge_weights": merge,
        "state": state,
        "x": flat(x),
        "x_shape": list(x_shape),
        "y": flat(y),
        "y_shape": list(y.shape),
    }


def main():
    cases = [build_case(i, *case) for i, case in enumerate(CASES)]
    names = [c["name"] for c in cases]
    assert len(set(names)) == len(names), "case names must be unique"
    text = json.dumps({"torch": torch.__version__, "cases": cases}, indent=1, sort_keys=True) + "\n"
    out = Path(os.environ["LMR_FIXTURES_OUT"]) / OUTPUT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
