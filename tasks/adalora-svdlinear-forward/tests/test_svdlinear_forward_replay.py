"""Replay tests for `SVDLinear.forward` (loralib/loralib/adalora.py).

Written for lmr (not upstream code). fixtures/svdlinear_cases.json, written by
generators/svdlinear_cases.py against the reference, holds layers in many configurations
(rank 0 to 4; fan_in_fan_out; with and without bias; float32 and float64; a changed ranknum
and a pruned triplet; training mode, eval mode with merged weights, eval mode unmerged;
inputs of shape (in,), (1, in), (n, in) and (a, b, in)), with every parameter and state flag
of the layer as train()/eval() left it, an input, and the output that the original
implementation returned. Each test rebuilds the layer, loads that state (without calling
.train()/.eval(), which would merge or unmerge the weights) and calls forward.
"""
import json
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

_tensor = torch.tensor
_no_grad = torch.no_grad
_Tensor = torch.Tensor
_set_training = nn.Module.train

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = json.loads((FIXTURES / "svdlinear_cases.json").read_text(encoding="utf-8"))["cases"]

# The upstream package lives in loralib/loralib and is used as `import loralib`
# (after `pip install -e loralib`): put its parent folder first on the path.
sys.path.insert(0, str(Path.cwd() / "loralib"))
from loralib.adalora import SVDLinear  # noqa: E402

TOLERANCE = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-5)}  # (rtol, atol)


def assert_close(actual, expected, rtol, atol, what):
    a = [float(v) for v in actual.detach().reshape(-1).tolist()]
    assert len(a) == len(expected), "%s: expected %d values, got %d" % (what, len(expected), len(a))
    for i, (x, y) in enumerate(zip(a, expected)):
        assert abs(x - y) <= atol + rtol * abs(y), "%s[%d]: expected %r, got %r" % (what, i, y, x)


def build(case):
    dtype = getattr(torch, case["dtype"])
    s = case["state"]
    layer = SVDLinear(
        case["in_features"], case["out_features"], r=case["r"], lora_alpha=case["lora_alpha"],
        lora_dropout=case["lora_dropout"], fan_in_fan_out=case["fan_in_fan_out"],
        merge_weights=case["merge_weights"], bias=case["bias"],
    ).to(dtype)
    with _no_grad():
        assert list(layer.weight.shape) == s["weight_shape"]
        layer.weight.copy_(_tensor(s["weight"], dtype=dtype).reshape(s["weight_shape"]))
        if case["bias"]:
            layer.bias.copy_(_tensor(s["bias"], dtype=dtype))
        if case["r"] > 0:
            layer.lora_A.copy_(_tensor(s["lora_A"], dtype=dtype).reshape(layer.lora_A.shape))
            layer.lora_B.copy_(_tensor(s["lora_B"], dtype=dtype).reshape(layer.lora_B.shape))
            layer.lora_E.copy_(_tensor(s["lora_E"], dtype=dtype).reshape(layer.lora_E.shape))
            layer.ranknum.fill_(s["ranknum"])
            layer.scaling = s["scaling"]
    layer.merged = s["merged"]
    _set_training(layer, s["training"])  # nn.Module.train: sets the flag, merges nothing
    return layer


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_forward_matches_recorded_output(case):
    layer = build(case)
    dtype = getattr(torch, case["dtype"])
    x = _tensor(case["x"], dtype=dtype).reshape(case["x_shape"])
    y = layer(x)
    assert isinstance(y, _Tensor)
    assert list(y.shape) == case["y_shape"], "output shape"
    assert y.dtype == dtype, "output dtype"
    rtol, atol = TOLERANCE[case["dtype"]]
    assert_close(y, case["y"], rtol, atol, "output")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_forward_leaves_the_layer_as_it_was(case):
    # forward only reads the layer: no merging or unmerging, no change of the stored weight.
    layer = build(case)
    dtype = getattr(torch, case["dtype"])
    weight_before = layer.weight.detach().clone()
    layer(_tensor(case["x"], dtype=dtype).reshape(case["x_shape"]))
    assert layer.merged == case["state"]["merged"], "forward changed layer.merged"
    assert bool((layer.weight.detach() == weight_before).all()), "forward changed the weight"
