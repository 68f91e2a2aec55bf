"""Property tests for Exp_Long_Term_Forecast.distillation_loss (written for lmr).

The method returns (loss, loss_gt, loss_logit, loss_feature) for one training batch:
- loss_gt: the MSE of the student's predictions to the targets;
- loss_logit = alpha * (period term + multi-scale term) between the student's and the
  teacher's predictions (batch, pred_len, channels), along the time axis;
- loss_feature = beta * (the same two terms) between the student's hidden features
  features[-2] (batch, channels, d_model) and the teacher's features (flattened after the
  channel axis) passed through self.regressor, along the hidden axis;
- loss = loss_gt + loss_logit + loss_feature.
Period term: softmax (temperature 0.5) over the non-zero frequencies of each series'
amplitude spectrum, KL(teacher || student) with 1e-8 added to the student's probabilities
inside the log, 0 log 0 = 0, averaged over every (sample, frequency, channel). Multi-scale
term: the mean over the four scales (the series and its means over 2, 4 and 8 steps, a
trailing remainder dropped) of the MSE between student and teacher.

The oracle below computes that in float64 from the definition: the spectrum from explicit
cosine and sine sums (no FFT), the scales from block means (no pooling layer), the
regressor as its two affine maps around a ReLU, and its gradients by autograd here. The
method runs in the candidate process (lmr_bridge): the probes build the object and the
regressor there from the data given and send back what the call returned; every expected
value is computed in this file.
"""
import math

import pytest
import torch
from lmr_bridge import probe, probe_helper

TEMPERATURE = 0.5
EPS = 1e-8
LEVELS, WINDOW = 3, 2
NAMES = ("loss", "loss_gt", "loss_logit", "loss_feature")
REGRESSOR_KEYS = ("model.0.bias", "model.0.weight", "model.2.bias", "model.2.weight")

RTOL, ATOL = 1e-9, 1e-12  # float64 throughout


# ---------------------------------------------------------------- the oracle (float64)

def amplitude_spectrum(x):
    """|DFT| of x (batch, length, channels) along the length axis, bins 0..length//2."""
    n = x.shape[1]
    k = torch.arange(n // 2 + 1, dtype=torch.float64).reshape(-1, 1)
    t = torch.arange(n, dtype=torch.float64).reshape(1, -1)
    angle = 2 * math.pi * k * t / n
    re = torch.einsum("kt,btc->bkc", torch.cos(angle), x)
    im = torch.einsum("kt,btc->bkc", torch.sin(angle), x)
    return torch.sqrt(re * re + im * im)


def period_kl(student, teacher):
    p_s = torch.softmax(amplitude_spectrum(student)[:, 1:, :] / TEMPERATURE, dim=1)
    p_t = torch.softmax(amplitude_spectrum(teacher)[:, 1:, :] / TEMPERATURE, dim=1)
    safe_t = torch.where(p_t > 0, p_t, torch.ones_like(p_t))
    terms = torch.where(p_t > 0, p_t * (torch.log(safe_t) - torch.log(p_s + EPS)), torch.zeros_like(p_t))
    return terms.mean()


def block_means(x):
    """x (batch, length, channels): means over blocks of 1, 2, 4, 8 steps, remainder dropped."""
    out = []
    for i in range(LEVELS + 1):
        size = WINDOW ** i
        n = x.shape[1] // size
        out.append(x[:, : n * size].reshape(x.shape[0], n, size, x.shape[2]).mean(dim=2))
    return out


def multiscale_mse(student, teacher):
    pairs = list(zip(block_means(student), block_means(teacher)))
    return sum(((a - b) ** 2).mean() for a, b in pairs) / len(pairs)


def oracle(inputs, reg, alpha, beta):
    """(loss, loss_gt, loss_logit, loss_feature) from float64 tensors; reg: the regressor state."""
    out, out_t, hidden, feat_t, y = (inputs[k] for k in ("outputs", "outputs_t", "feature_hidden", "features_t", "batch_y"))
    b, c = feat_t.shape[0], feat_t.shape[1]
    h = torch.clamp(feat_t.reshape(b, c, -1) @ reg["model.0.weight"].T + reg["model.0.bias"], min=0.0)
    aligned = h @ reg["model.2.weight"].T + reg["model.2.bias"]
    fs, ft = hidden.transpose(1, 2), aligned.transpose(1, 2)
    loss_logit = alpha * (period_kl(out, out_t) + multiscale_mse(out, out_t))
    loss_feature = beta * (period_kl(fs, ft) + multiscale_mse(fs, ft))
    loss_gt = ((out - y) ** 2).mean()
    return [loss_gt + loss_logit + loss_feature, loss_gt, loss_logit, loss_feature]


# ---------------------------------------------------------------- inputs (chosen here)

def make_case(seed, b, c, t, d, tail, periods=None, amplitude=1.0, dtype=torch.float64):
    """A batch as the training loop has it: seasonal targets, a teacher near them, a student
    further off; hidden features of order one; teacher features; a regressor's weights."""
    g = torch.Generator().manual_seed(seed)
    steps = torch.arange(t, dtype=torch.float64).reshape(1, t, 1)

    def seasonal(period=None):
        p = 4.0 + 30.0 * torch.rand(b, 1, c, generator=g, dtype=torch.float64) if period is None else period
        phase = 2 * math.pi * torch.rand(b, 1, c, generator=g, dtype=torch.float64)
        return amplitude * torch.sin(2 * math.pi * steps / p + phase)

    truth = seasonal() + 0.5 * seasonal() + 0.1 * torch.randn(b, t, c, generator=g, dtype=torch.float64)
    if periods is None:
        teacher = truth + 0.2 * torch.randn(b, t, c, generator=g, dtype=torch.float64)
        student = truth + 0.5 * torch.randn(b, t, c, generator=g, dtype=torch.float64)
    else:  # strongly periodic forecasts, the student on another period than the teacher
        teacher = 2.0 * seasonal(periods[0]) + 0.05 * torch.randn(b, t, c, generator=g, dtype=torch.float64)
        student = 2.0 * seasonal(periods[1]) + 0.05 * torch.randn(b, t, c, generator=g, dtype=torch.float64)
    d_in = int(math.prod(tail))
    inputs = {
        "outputs": student,
        "outputs_t": teacher,
        "batch_y": truth + 0.1 * torch.randn(b, t, c, generator=g, dtype=torch.float64),
        "feature_hidden": 0.7 * torch.randn(b, c, d, generator=g, dtype=torch.float64),
        "feature_head": student.permute(0, 2, 1).clone(),
        "features_t": torch.randn(b, c, *tail, generator=g, dtype=torch.float64),
    }
    reg = {
        "model.0.weight": torch.randn(d, d_in, generator=g, dtype=torch.float64) / math.sqrt(d_in),
        "model.0.bias": 0.1 * torch.randn(d, generator=g, dtype=torch.float64),
        "model.2.weight": torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d),
        "model.2.bias": 0.1 * torch.randn(d, generator=g, dtype=torch.float64),
    }
    return {k: v.to(dtype) for k, v in inputs.items()}, {k: v.to(dtype) for k, v in reg.items()}


CONFIGS = {  # name: (seed, batch, channels, pred_len, d_model, teacher feature tail, alpha, beta, extra)
    "pred96": (1, 2, 3, 96, 16, (24,), 1.0, 1.0, {}),
    "odd-length": (2, 2, 2, 37, 13, (10,), 0.5, 2.0, {}),
    "uneven-length": (3, 3, 1, 50, 20, (12,), 2.0, 0.5, {}),
    "4d-teacher-features": (4, 2, 3, 24, 12, (3, 4), 1.0, 1.0, {}),
    "one-sample-one-channel": (5, 1, 1, 40, 9, (7,), 0.7, 1.3, {}),
    "low-amplitude": (6, 2, 3, 48, 10, (8,), 1.0, 1.0, {"amplitude": 0.05}),
    "shortest-lengths": (7, 2, 2, 9, 8, (4,), 1.0, 1.0, {}),
}


# ---------------------------------------------------------------- probes (candidate side)

@probe_helper
def call_method(inputs, reg, alpha, beta, front=()):
    """In the candidate: an Exp_Long_Term_Forecast holding args (alpha, beta) and a
    models.Regressor.Model with the given weights, and the method's result on `inputs`.
    `front`: further student features placed before the last two (models differ in how many
    they return). Returns (result, leaves): predictions, hidden and head features as leaves."""
    import argparse

    import torch.nn as nn
    from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
    from models import Regressor

    w_in = reg["model.0.weight"]
    regressor = Regressor.Model(None, w_in.shape[1], w_in.shape[0]).to(w_in.dtype)
    regressor.load_state_dict(reg)
    exp = Exp_Long_Term_Forecast.__new__(Exp_Long_Term_Forecast)
    exp.args = argparse.Namespace(alpha=alpha, beta=beta)
    exp.regressor = regressor
    outputs = inputs["outputs"].clone().requires_grad_(True)
    hidden = inputs["feature_hidden"].clone().requires_grad_(True)
    head = inputs["feature_head"].clone().requires_grad_(True)
    feats = [f.clone() for f in front] + [hidden, head]
    result = exp.distillation_loss(outputs, [inputs["outputs_t"]], feats, [inputs["features_t"]], inputs["batch_y"], nn.MSELoss())
    return result, {"outputs": outputs, "hidden": hidden, "head": head, "regressor": regressor}


@probe
def values_of(cases):
    """In the candidate: the four returned values of each (inputs, reg, alpha, beta[, front]) case."""
    import torch

    out = []
    for case in cases:
        result, _ = call_method(*case)
        out.append([torch.as_tensor(v).detach() for v in result])
    return out


@probe
def raw_result(inputs, reg, alpha, beta):
    """In the candidate: the result as returned (type, shape, dtype, requires_grad)."""
    result, _ = call_method(inputs, reg, alpha, beta)
    return {
        "type": type(result).__name__,
        "len": len(result),
        "items": [
            {"tensor": hasattr(v, "shape"), "shape": list(getattr(v, "shape", [])), "dtype": str(getattr(v, "dtype", type(v).__name__)),
             "requires_grad": bool(getattr(v, "requires_grad", False))}
            for v in result
        ],
    }


@probe
def gradients_of(inputs, reg, alpha, beta):
    """In the candidate: d loss / d (predictions, hidden features, head features, regressor parameters)."""
    import torch

    result, leaves = call_method(inputs, reg, alpha, beta)
    named = sorted(leaves["regressor"].named_parameters())
    got = torch.autograd.grad(result[0], [leaves["outputs"], leaves["hidden"], leaves["head"]] + [p for _, p in named], allow_unused=True)
    names = ["outputs", "hidden", "head"] + [n for n, _ in named]
    return {n: (None if g is None else g.detach()) for n, g in zip(names, got)}


@probe
def inputs_after_the_call(inputs, reg, alpha, beta):
    """In the candidate: the tensors passed in, as the call left them."""
    import argparse

    import torch.nn as nn
    from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
    from models import Regressor

    w_in = reg["model.0.weight"]
    regressor = Regressor.Model(None, w_in.shape[1], w_in.shape[0]).to(w_in.dtype)
    regressor.load_state_dict(reg)
    exp = Exp_Long_Term_Forecast.__new__(Exp_Long_Term_Forecast)
    exp.args = argparse.Namespace(alpha=alpha, beta=beta)
    exp.regressor = regressor
    outputs_t, features_t = [inputs["outputs_t"]], [inputs["features_t"]]
    features = [inputs["feature_hidden"], inputs["feature_head"]]
    exp.distillation_loss(inputs["outputs"], outputs_t, features, features_t, inputs["batch_y"], nn.MSELoss())
    return {
        "outputs": inputs["outputs"],
        "outputs_t": outputs_t,
        "features": features,
        "features_t": features_t,
        "batch_y": inputs["batch_y"],
        "regressor": {k: v.detach() for k, v in regressor.state_dict().items()},
    }


# ---------------------------------------------------------------- helpers (oracle side)

def config_case(name, dtype=torch.float64, **overrides):
    seed, b, c, t, d, tail, alpha, beta, extra = CONFIGS[name]
    inputs, reg = make_case(seed, b, c, t, d, tail, dtype=dtype, **extra)
    return inputs, reg, overrides.get("alpha", alpha), overrides.get("beta", beta)


def assert_values(got, want, rtol=RTOL, atol=ATOL):
    assert len(got) == 4
    for name, g, w in zip(NAMES, got, want):
        g, w = float(g), float(w)
        assert abs(g - w) <= atol + rtol * abs(w), (name, g, w)


def oracle_gradients(inputs, reg, alpha, beta):
    out = inputs["outputs"].clone().requires_grad_(True)
    hidden = inputs["feature_hidden"].clone().requires_grad_(True)
    reg_leaves = {k: v.clone().requires_grad_(True) for k, v in reg.items()}
    loss = oracle(dict(inputs, outputs=out, feature_hidden=hidden), reg_leaves, alpha, beta)[0]
    keys = list(REGRESSOR_KEYS)
    got = torch.autograd.grad(loss, [out, hidden] + [reg_leaves[k] for k in keys])
    return dict(zip(["outputs", "hidden"] + keys, got))


def assert_grad(got, want, what):
    assert isinstance(got, torch.Tensor), f"no gradient reaches {what}"
    assert tuple(got.shape) == tuple(want.shape), what
    assert torch.allclose(got.double(), want, rtol=1e-8, atol=1e-11), (what, float((got.double() - want).abs().max()))


# ---------------------------------------------------------------- tests

@pytest.mark.parametrize("name", list(CONFIGS))
def test_values_match_an_independent_float64_implementation(name):
    inputs, reg, alpha, beta = config_case(name)
    (got,) = values_of([(inputs, reg, alpha, beta)])
    assert_values(got, oracle(inputs, reg, alpha, beta))


def test_near_zero_student_probabilities_are_offset_inside_the_log():
    # Strongly periodic forecasts on different periods: the student's softmax is ~1e-80 where the
    # teacher's has its mass, so the 1e-8 offset decides the period term.
    inputs, reg = make_case(11, 2, 2, 96, 16, (16,), periods=(12.0, 32.0))
    want = oracle(inputs, reg, 1.0, 0.0)
    assert float(period_kl(inputs["outputs"], inputs["outputs_t"])) > 0.3  # ~ -log(1e-8) / 47 per series
    (got,) = values_of([(inputs, reg, 1.0, 0.0)])
    assert_values(got, want)


def test_zero_teacher_probabilities_contribute_nothing_in_float32():
    # The same forecasts in float32: the teacher's softmax underflows to exactly 0 away from its
    # peak (0 log 0 = 0), the student's too (the offset keeps the log finite).
    inputs, reg = make_case(12, 2, 2, 96, 16, (16,), periods=(24.0, 8.0), dtype=torch.float32)
    want = oracle({k: v.double() for k, v in inputs.items()}, {k: v.double() for k, v in reg.items()}, 1.0, 1.0)
    (got,) = values_of([(inputs, reg, 1.0, 1.0)])
    assert all(math.isfinite(float(v)) for v in got)
    assert_values(got, want, rtol=1e-5, atol=1e-7)


def test_total_is_the_ground_truth_term_plus_both_distillation_terms():
    inputs, reg, alpha, beta = config_case("uneven-length")
    (got,) = values_of([(inputs, reg, alpha, beta)])
    total, gt, logit, feature = (float(v) for v in got)
    assert abs(total - (gt + logit + feature)) <= 1e-12 + 1e-12 * abs(total)
    assert abs(gt - float(((inputs["outputs"] - inputs["batch_y"]) ** 2).mean())) <= 1e-12


def test_zero_weights_leave_only_the_ground_truth_error():
    inputs, reg, _, _ = config_case("pred96")
    (got,) = values_of([(inputs, reg, 0.0, 0.0)])
    mse = float(((inputs["outputs"] - inputs["batch_y"]) ** 2).mean())
    assert [float(v) for v in got[2:]] == [0.0, 0.0]
    assert abs(float(got[0]) - mse) <= 1e-12 and abs(float(got[1]) - mse) <= 1e-12


def test_prediction_terms_scale_with_alpha_and_ignore_beta():
    inputs, reg, _, _ = config_case("odd-length")
    one, scaled, other_beta = values_of([(inputs, reg, 1.0, 1.0), (inputs, reg, 2.5, 1.0), (inputs, reg, 1.0, 0.25)])
    assert float(one[2]) > 0
    assert abs(float(scaled[2]) - 2.5 * float(one[2])) <= 1e-12 + 1e-10 * float(one[2])
    assert abs(float(other_beta[2]) - float(one[2])) <= 1e-12


def test_feature_terms_scale_with_beta_and_ignore_alpha():
    inputs, reg, _, _ = config_case("odd-length")
    one, scaled, other_alpha = values_of([(inputs, reg, 1.0, 1.0), (inputs, reg, 1.0, 0.4), (inputs, reg, 3.0, 1.0)])
    assert float(one[3]) > 0
    assert abs(float(scaled[3]) - 0.4 * float(one[3])) <= 1e-12 + 1e-10 * float(one[3])
    assert abs(float(other_alpha[3]) - float(one[3])) <= 1e-12


def test_a_student_that_matches_its_teacher_pays_no_distillation_loss():
    inputs, _, _, _ = config_case("pred96")
    b, c, d = inputs["feature_hidden"].shape
    hidden = inputs["feature_hidden"].abs() + 0.1  # positive, so a ReLU identity regressor reproduces it
    eye = torch.eye(d, dtype=torch.float64)
    reg = {"model.0.weight": eye, "model.0.bias": torch.zeros(d, dtype=torch.float64),
           "model.2.weight": eye.clone(), "model.2.bias": torch.zeros(d, dtype=torch.float64)}
    same = dict(inputs, outputs_t=inputs["outputs"].clone(), feature_hidden=hidden, features_t=hidden.clone())
    (got,) = values_of([(same, reg, 1.0, 1.0)])
    assert abs(float(got[2])) <= 1e-7 and abs(float(got[3])) <= 1e-7, [float(v) for v in got]


def test_a_common_offset_on_forecasts_teacher_and_targets_changes_nothing():
    inputs, reg, alpha, beta = config_case("4d-teacher-features")
    c = inputs["outputs"].shape[2]
    offset = torch.linspace(-3.0, 5.0, c, dtype=torch.float64).reshape(1, 1, c)
    shifted = dict(inputs, outputs=inputs["outputs"] + offset, outputs_t=inputs["outputs_t"] + offset, batch_y=inputs["batch_y"] + offset)
    plain, moved = values_of([(inputs, reg, alpha, beta), (shifted, reg, alpha, beta)])
    for name, a, m in zip(NAMES, plain, moved):
        assert abs(float(a) - float(m)) <= 1e-10 * (1 + abs(float(a))), name


def test_only_the_second_to_last_student_feature_is_used():
    inputs, reg, alpha, beta = config_case("pred96")
    b, c, t = inputs["feature_head"].shape
    other = dict(inputs, feature_head=torch.randn(b, c, t, generator=torch.Generator().manual_seed(3), dtype=torch.float64))
    extra = [torch.randn(b, c, 7, generator=torch.Generator().manual_seed(4), dtype=torch.float64)]
    plain, new_head, three = values_of([(inputs, reg, alpha, beta), (other, reg, alpha, beta), (inputs, reg, alpha, beta, extra)])
    for name, a, x, y in zip(NAMES, plain, new_head, three):
        assert float(a) == float(x) == float(y), name


def test_teacher_features_are_flattened_after_the_channel_axis():
    inputs, reg, alpha, beta = config_case("4d-teacher-features")
    b, c = inputs["features_t"].shape[:2]
    flat = dict(inputs, features_t=inputs["features_t"].reshape(b, c, -1))
    four_d, three_d = values_of([(inputs, reg, alpha, beta), (flat, reg, alpha, beta)])
    for name, x, y in zip(NAMES, four_d, three_d):
        assert abs(float(x) - float(y)) <= 1e-13 * (1 + abs(float(x))), name


@pytest.mark.parametrize("name", ["odd-length", "4d-teacher-features"])
def test_gradient_wrt_the_predictions(name):
    inputs, reg, alpha, beta = config_case(name)
    got = gradients_of(inputs, reg, alpha, beta)
    assert_grad(got["outputs"], oracle_gradients(inputs, reg, alpha, beta)["outputs"], "outputs")


@pytest.mark.parametrize("name", ["odd-length", "4d-teacher-features"])
def test_gradient_wrt_the_hidden_features(name):
    inputs, reg, alpha, beta = config_case(name)
    got = gradients_of(inputs, reg, alpha, beta)
    assert_grad(got["hidden"], oracle_gradients(inputs, reg, alpha, beta)["hidden"], "features[-2]")
    assert got["head"] is None or float(got["head"].abs().max()) == 0.0


@pytest.mark.parametrize("name", ["odd-length", "4d-teacher-features"])
def test_regressor_is_trained_through_the_feature_terms(name):
    inputs, reg, alpha, beta = config_case(name)
    got = gradients_of(inputs, reg, alpha, beta)
    want = oracle_gradients(inputs, reg, alpha, beta)
    for key in REGRESSOR_KEYS:
        assert_grad(got[key], want[key], "regressor " + key)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_returns_four_differentiable_scalars_of_the_input_dtype(dtype):
    inputs, reg, alpha, beta = config_case("odd-length", dtype=dtype)
    got = raw_result(inputs, reg, alpha, beta)
    assert got["type"] in ("tuple", "list") and got["len"] == 4
    for item in got["items"]:
        assert item["tensor"] and item["shape"] == [] and item["dtype"] == str(dtype), item
    assert got["items"][0]["requires_grad"]


def test_inputs_are_left_unchanged():
    inputs, reg, alpha, beta = config_case("uneven-length")
    after = inputs_after_the_call({k: v.clone() for k, v in inputs.items()}, {k: v.clone() for k, v in reg.items()}, alpha, beta)
    assert torch.equal(after["outputs"], inputs["outputs"])
    assert torch.equal(after["batch_y"], inputs["batch_y"])
    assert len(after["outputs_t"]) == 1 and torch.equal(after["outputs_t"][0], inputs["outputs_t"])
    assert len(after["features_t"]) == 1 and torch.equal(after["features_t"][0], inputs["features_t"])
    assert len(after["features"]) == 2
    assert torch.equal(after["features"][0], inputs["feature_hidden"]) and torch.equal(after["features"][1], inputs["feature_head"])
    for k in REGRESSOR_KEYS:
        assert torch.equal(after["regressor"][k], reg[k]), k
