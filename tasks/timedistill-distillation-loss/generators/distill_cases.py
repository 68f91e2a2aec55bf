"""Generator of fixtures/distill_cases.json: the reference distillation loss on seeded inputs.

Written for lmr (no upstream code). `lmr record` runs it from the root of the reference tree
(after tests/candidate_setup.py), with the prepared `Exp_Long_Term_Forecast.distillation_loss`
in place. A driver recording cannot store these calls: `self` is an `Exp_Long_Term_Forecast`
whose `args` is an argparse Namespace and whose `regressor` is a `models.Regressor.Model`.
So this script builds each call itself, the way `Exp_Long_Term_Forecast.train` makes it
(one teacher; the student's feature list as models/MLP.py returns it: the hidden features
(batch, channels, d_model) then the pre-permute output (batch, channels, pred_len); the
teacher's aligned features; the regressor; nn.MSELoss()), and writes what the replay tests
(tests/test_replay.py) need to rebuild the call through public constructors: the shapes,
alpha and beta, every input tensor, the regressor's weights, and the reference's four
returned values and the gradients of the total loss.

Inputs look like normalised forecasts: a few sinusoids of random periods plus noise for the
ground truth, a teacher close to it, a student further off; hidden features of order one.
Cases: the shapes the training loop passes (pred_len 96 and 192), odd and uneven lengths
(the spectrum of an odd length, scales the window does not divide), 4-D teacher features
(flattened before the regressor), each weight alone, both zero, small weights, one sample
and one channel, series five times larger, series so small that noise shapes their spectra,
and a student whose dominant period differs from the teacher's (its
spectrum is so peaked that its softmax underflows away from its own peak).

Seeded here; inputs are float32 values written as their shortest float32 repr (exact);
outputs as repr of the float32 values, gradients to 8 significant digits.
"""
import argparse
import json
import math
import os

import numpy as np
import torch
import torch.nn as nn

from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from models import Regressor

torch.manual_seed(0)
gen = torch.Generator().manual_seed(2025)


def randn(*shape):
    return torch.randn(*shape, generator=gen)


def rand(*shape):
    return torch.rand(*shape, generator=gen)


def seasonal(b, t, c, amplitude=1.0, periods=None):
    """(b, t, c): a sum of two sinusoids per series plus a little noise."""
    steps = torch.arange(t, dtype=torch.float32).reshape(1, t, 1)
    out = torch.zeros(b, t, c)
    for k in range(2):
        if periods is None:
            period = 4.0 + 40.0 * rand(b, 1, c)
        else:
            period = torch.full((b, 1, c), float(periods[k]))
        phase = 2 * math.pi * rand(b, 1, c)
        amp = amplitude * (0.5 + rand(b, 1, c)) / (k + 1)
        out = out + amp * torch.sin(2 * math.pi * steps / period + phase)
    return out + 0.1 * randn(b, t, c)


def f32_list(x):
    return [float(str(np.float32(v))) for v in x.detach().reshape(-1).tolist()]


def g8(x):
    return [float("%.8g" % v) for v in x.detach().reshape(-1).tolist()]


def run_case(name, b, c, t, d, teacher_tail, alpha, beta, grads=True, scale=1.0, periods=None):
    truth = scale * seasonal(b, t, c)
    if periods is None:
        teacher = truth + 0.2 * scale * randn(b, t, c)
        student = truth + 0.5 * scale * randn(b, t, c) + 0.1 * scale * seasonal(b, t, c)
    else:  # the teacher follows one period, the student another, both strongly periodic
        teacher = seasonal(b, t, c, amplitude=2.0 * scale, periods=periods[0])
        student = seasonal(b, t, c, amplitude=2.0 * scale, periods=periods[1])
    batch_y = truth + 0.1 * randn(b, t, c)
    hidden = 0.7 * randn(b, c, d)
    head = student.permute(0, 2, 1).clone()  # the student's last feature: (b, c, pred_len)
    teacher_feat = randn(b, c, *teacher_tail)
    d_in = int(np.prod(teacher_tail))

    torch.manual_seed(len(name) * 7919 + d_in)
    regressor = Regressor.Model(None, d_in, d).float()
    weights = {k: v.detach().clone() for k, v in regressor.state_dict().items()}

    exp = Exp_Long_Term_Forecast.__new__(Exp_Long_Term_Forecast)
    exp.args = argparse.Namespace(alpha=alpha, beta=beta)
    exp.regressor = regressor

    outputs = student.clone().requires_grad_(True)
    feat_hidden = hidden.clone().requires_grad_(True)
    feat_head = head.clone().requires_grad_(True)
    loss, loss_gt, loss_logit, loss_feature = exp.distillation_loss(
        outputs, [teacher.clone()], [feat_hidden, feat_head], [teacher_feat.clone()], batch_y.clone(), nn.MSELoss()
    )
    case = {
        "name": name,
        "batch": b,
        "channels": c,
        "pred_len": t,
        "d_model": d,
        "teacher_feature_tail": list(teacher_tail),
        "alpha": alpha,
        "beta": beta,
        "inputs": {
            "outputs": f32_list(student),
            "outputs_t": f32_list(teacher),
            "batch_y": f32_list(batch_y),
            "feature_hidden": f32_list(hidden),
            "feature_head": f32_list(head),
            "features_t": f32_list(teacher_feat),
        },
        "regressor": {k: f32_list(v) for k, v in sorted(weights.items())},
        "regressor_shapes": {k: list(v.shape) for k, v in sorted(weights.items())},
        "expected": {
            "loss": float(loss),
            "loss_gt": float(loss_gt),
            "loss_logit": float(loss_logit),
            "loss_feature": float(loss_feature),
        },
    }
    if grads:
        params = [p for _, p in sorted(regressor.named_parameters())]
        got = torch.autograd.grad(loss, [outputs, feat_hidden] + params)
        case["expected_grad"] = {
            "outputs": g8(got[0]),
            "feature_hidden": g8(got[1]),
            "regressor": {k: g8(g) for (k, _), g in zip(sorted(regressor.named_parameters()), got[2:])},
        }
    return case


CASES = [
    run_case("pred96-weights1", 2, 3, 96, 16, (24,), 1.0, 1.0),
    run_case("pred192-one-sample", 1, 2, 192, 8, (8,), 1.0, 1.0, grads=False),
    run_case("odd-length", 2, 2, 37, 13, (10,), 0.5, 2.0),
    run_case("uneven-length", 3, 1, 50, 20, (12,), 2.0, 0.5, grads=False),
    run_case("teacher-features-4d", 2, 3, 24, 12, (3, 4), 1.0, 1.0),
    run_case("alpha-only", 2, 2, 48, 10, (6,), 1.0, 0.0),
    run_case("beta-only", 2, 2, 48, 10, (6,), 0.0, 1.0),
    run_case("no-weights", 2, 2, 32, 8, (6,), 0.0, 0.0, grads=False),
    run_case("small-weights", 2, 3, 64, 16, (20,), 0.1, 0.3, grads=False),
    run_case("one-channel-one-sample", 1, 1, 48, 8, (5,), 1.0, 1.0),
    run_case("scale-5", 2, 2, 96, 16, (16,), 0.5, 0.5, grads=False, scale=5.0),
    run_case("low-amplitude", 2, 3, 48, 12, (9,), 1.0, 1.0, scale=0.1),
    run_case("periods-differ", 2, 2, 96, 16, (16,), 1.0, 1.0, periods=((24.0, 12.0), (32.0, 8.0))),
]

out_dir = os.path.join(os.environ["LMR_FIXTURES_OUT"], "fixtures")
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "distill_cases.json"), "w", encoding="utf-8") as f:
    json.dump({"cases": CASES}, f, sort_keys=True, separators=(",", ":"))
    f.write("\n")
