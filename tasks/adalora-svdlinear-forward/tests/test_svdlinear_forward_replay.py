"""Replay tests for `SVDLinear.forward` (loralib/loralib/adalora.py).

Written for lmr (not upstream code). fixtures/svdlinear_cases.json, written by
generators/svdlinear_cases.py against the reference, holds layers in many configurations
(rank 0 to 4; fan_in_fan_out; with and without bias; float32 and float64; a changed ranknum
and a pruned triplet; training mode, eval mode with merged weights, eval mode unmerged;
inputs of shape (in,), (1, in), (n, in) and (a, b, in)), with every parameter and state flag
of the layer as train()/eval() left it, an input, and the output that the original
implementation returned. Each test rebuilds the layer, loads that state (without calling
.train()/.eval(), which would merge or unmerge the weights) and calls forward.

The layer lives in the candidate process (lmr_bridge): the probe below gets a case without
its recorded output, builds the layer there and returns what forward gave and the layer's
state after it; the recorded output, which never leaves this process, decides here.
"""
import json
from pathlib import Path

import pytest
import torch
from lmr_bridge import probe, probe_helper

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = json.loads((FIXTURES / "svdlinear_cases.json").read_text(encoding="utf-8"))["cases"]

TOLERANCE = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-5)}  # (rtol, atol)


def assert_close(actual, expected, rtol, atol, what):
    a = [float(v) for v in actual.detach().reshape(-1).tolist()]
    assert len(a) == len(expected), "%s: expected %d values, got %d" % (what, len(expected), len(a))
    for i, (x, y) in enumerate(zip(a, expected)):
        assert abs(x - y) <= atol + rtol * abs(y), "%s[%d]: expected %r, got %r" % (what, i, y, x)


@probe_helper
def svdlinear_class():
    """In the candidate: SVDLinear, imported as the upstream README's users do (`import
    loralib` after `pip install -e loralib`): loralib/ first on the path."""
    import os
    import sys

    folder = os.path.join(os.getcwd(), "loralib")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    from loralib.adalora import SVDLinear

    return SVDLinear


@probe
def recorded_forward(case):
    """In the candidate: the case's layer, loaded with its recorded state (nn.Module.train
    sets the mode flag and merges nothing), called on the case's input."""
    SVDLinear = svdlinear_class()
    dtype = getattr(torch, case["dtype"])
    s = case["state"]
    layer = SVDLinear(
        case["in_features"], case["out_features"], r=case["r"], lora_alpha=case["lora_alpha"],
        lora_dropout=case["lora_dropout"], fan_in_fan_out=case["fan_in_fan_out"],
        merge_weights=case["merge_weights"], bias=case["bias"],
    ).to(dtype)
    built_shape = list(layer.weight.shape)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(s["weight"], dtype=dtype).reshape(s["weight_shape"]))
        if case["bias"]:
            layer.bias.copy_(torch.tensor(s["bias"], dtype=dtype))
        if case["r"] > 0:
            layer.lora_A.copy_(torch.tensor(s["lora_A"], dtype=dtype).reshape(layer.lora_A.shape))
            layer.lora_B.copy_(torch.tensor(s["lora_B"], dtype=dtype).reshape(layer.lora_B.shape))
            layer.lora_E.copy_(torch.tensor(s["lora_E"], dtype=dtype).reshape(layer.lora_E.shape))
            layer.ranknum.fill_(s["ranknum"])
            layer.scaling = s["scaling"]
    layer.merged = s["merged"]
    torch.nn.Module.train(layer, s["training"])  # sets the flag, merges nothing
    x = torch.tensor(case["x"], dtype=dtype).reshape(case["x_shape"])
    y = layer(x)
    return {
        "built_shape": built_shape,
        "y": y.detach() if isinstance(y, torch.Tensor) else y,
        "merged": layer.merged,
        "weight": layer.weight.detach().clone(),
    }


def without_output(case):
    """The case as the candidate gets it: everything but the recorded output."""
    return {k: v for k, v in case.items() if k not in ("y", "y_shape")}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_forward_matches_recorded_output(case):
    got = recorded_forward(without_output(case))
    assert got["built_shape"] == case["state"]["weight_shape"], "the layer's weight shape"
    dtype = getattr(torch, case["dtype"])
    y = got["y"]
    assert isinstance(y, torch.Tensor)
    assert list(y.shape) == case["y_shape"], "output shape"
    assert y.dtype == dtype, "output dtype"
    rtol, atol = TOLERANCE[case["dtype"]]
    assert_close(y, case["y"], rtol, atol, "output")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_forward_leaves_the_layer_as_it_was(case):
    # forward only reads the layer: no merging or unmerging, no change of the stored weight.
    got = recorded_forward(without_output(case))
    s = case["state"]
    weight_before = torch.tensor(s["weight"], dtype=getattr(torch, case["dtype"])).reshape(s["weight_shape"])
    assert got["merged"] == s["merged"], "forward changed layer.merged"
    assert bool((got["weight"] == weight_before).all()), "forward changed the weight"
