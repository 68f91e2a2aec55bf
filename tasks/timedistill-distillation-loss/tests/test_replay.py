"""Replay tests: Exp_Long_Term_Forecast.distillation_loss against the reference's values.

generators/distill_cases.py ran the reference on seeded float32 inputs shaped as the training
loop passes them (one teacher; the student's feature list as models/MLP.py returns it; a
models.Regressor.Model) and wrote the inputs, the regressor's weights, alpha and beta, the four
returned values and, for some cases, the gradients of the total loss with respect to the
student's predictions, its hidden features and the regressor's parameters.

Each test rebuilds one case in the candidate process (lmr_bridge) through public constructors
(an Exp_Long_Term_Forecast made without __init__, which needs teacher checkpoints, holding
`args` with alpha and beta and the regressor) and sends back what the call returned; the
recorded values never leave this process.

Tolerances: the inputs are float32. A float64 implementation written from the definition
(tests/test_properties.py's oracle) agrees with every recorded value to 6e-7 relative and with
every recorded gradient to 1e-6 of the largest entry, so RTOL 1e-5 on values and 1e-5 of the
largest entry on gradients leave room for any sound float32 or float64 computation and for
other summation orders, and no more.
"""
import json
from pathlib import Path

import pytest
import torch
from lmr_bridge import probe

RTOL = 1e-5
ATOL = 1e-7
GRAD_RTOL = 1e-4
GRAD_ATOL_FRACTION = 1e-5  # of the largest recorded gradient entry

CASES = json.loads((Path(__file__).resolve().parent / "../fixtures/distill_cases.json").read_text(encoding="utf-8"))["cases"]
GRAD_CASES = [c for c in CASES if "expected_grad" in c]
NAMES = ("loss", "loss_gt", "loss_logit", "loss_feature")
REGRESSOR_KEYS = ("model.0.bias", "model.0.weight", "model.2.bias", "model.2.weight")


@probe
def distill(tensors, regressor_state, alpha, beta, with_grads):
    """In the candidate: the method on one case; its four values, and the gradients of the
    total loss with respect to the predictions, the hidden features and the regressor."""
    import argparse

    import torch
    import torch.nn as nn
    from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
    from models import Regressor

    w_in = regressor_state["model.0.weight"]
    regressor = Regressor.Model(None, w_in.shape[1], w_in.shape[0]).to(w_in.dtype)
    regressor.load_state_dict(regressor_state)
    exp = Exp_Long_Term_Forecast.__new__(Exp_Long_Term_Forecast)
    exp.args = argparse.Namespace(alpha=alpha, beta=beta)
    exp.regressor = regressor

    outputs = tensors["outputs"].clone().requires_grad_(True)
    hidden = tensors["feature_hidden"].clone().requires_grad_(True)
    head = tensors["feature_head"].clone().requires_grad_(True)
    result = exp.distillation_loss(
        outputs, [tensors["outputs_t"]], [hidden, head], [tensors["features_t"]], tensors["batch_y"], nn.MSELoss()
    )
    values = [torch.as_tensor(v).detach().double() for v in result]
    grads = None
    if with_grads:
        params = [p for _, p in sorted(regressor.named_parameters())]
        got = torch.autograd.grad(result[0], [outputs, hidden] + params, allow_unused=True)
        names = ["outputs", "feature_hidden"] + [n for n, _ in sorted(regressor.named_parameters())]
        grads = {n: (None if g is None else g.detach()) for n, g in zip(names, got)}
    return {"values": values, "grads": grads}


def rebuild(case):
    b, c, t, d = case["batch"], case["channels"], case["pred_len"], case["d_model"]
    shapes = {
        "outputs": (b, t, c),
        "outputs_t": (b, t, c),
        "batch_y": (b, t, c),
        "feature_hidden": (b, c, d),
        "feature_head": (b, c, t),
        "features_t": tuple([b, c] + case["teacher_feature_tail"]),
    }
    tensors = {k: torch.tensor(case["inputs"][k], dtype=torch.float32).reshape(s) for k, s in shapes.items()}
    state = {
        k: torch.tensor(case["regressor"][k], dtype=torch.float32).reshape(case["regressor_shapes"][k])
        for k in case["regressor"]
    }
    return tensors, state


def run(case, with_grads=False):
    tensors, state = rebuild(case)
    return distill(tensors, state, case["alpha"], case["beta"], with_grads)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_four_values_match_the_reference(case):
    got = run(case)["values"]
    assert len(got) == 4
    for name, value in zip(NAMES, got):
        want = case["expected"][name]
        assert abs(float(value) - want) <= ATOL + RTOL * abs(want), (name, float(value), want)


def _assert_grad_close(got, want, what):
    want = torch.tensor(want, dtype=torch.float64)
    assert got is not None, f"no gradient reaches {what}"
    got = got.double().reshape(-1)
    assert got.shape == want.shape, what
    atol = GRAD_ATOL_FRACTION * float(want.abs().max())
    assert torch.allclose(got, want, rtol=GRAD_RTOL, atol=atol), (what, float((got - want).abs().max()))


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c["name"] for c in GRAD_CASES])
def test_gradient_wrt_the_predictions_matches_the_reference(case):
    grads = run(case, with_grads=True)["grads"]
    _assert_grad_close(grads["outputs"], case["expected_grad"]["outputs"], "outputs")


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c["name"] for c in GRAD_CASES])
def test_gradient_wrt_the_hidden_features_matches_the_reference(case):
    grads = run(case, with_grads=True)["grads"]
    want = case["expected_grad"]["feature_hidden"]
    if case["beta"] == 0:  # no feature term: nothing reaches the hidden features
        got = grads["feature_hidden"]
        assert got is None or float(got.abs().max()) == 0.0
    else:
        _assert_grad_close(grads["feature_hidden"], want, "features[-2]")


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c["name"] for c in GRAD_CASES])
def test_gradient_wrt_the_regressor_matches_the_reference(case):
    grads = run(case, with_grads=True)["grads"]
    for key in REGRESSOR_KEYS:
        want = case["expected_grad"]["regressor"][key]
        if case["beta"] == 0:
            got = grads[key]
            assert got is None or float(got.abs().max()) == 0.0, key
        else:
            _assert_grad_close(grads[key], want, "regressor " + key)
