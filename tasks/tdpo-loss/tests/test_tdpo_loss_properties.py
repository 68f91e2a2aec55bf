"""Property tests for `tdpo_loss` (trainers.py), from the TDPO paper's two losses.

Written for lmr (not upstream code). The expected values are computed here in float64 with
the standard library, from the paper's definitions (Section 4: the preference logit of the
Bradley-Terry reformulation, u minus delta, and the TDPO1 / TDPO2 losses built on it),
independently of the code under test. The inputs are what `_tdpo_get_batch_logps` hands
the loss through `tdpo_concatenated_forward`: per-pair summed log-ratio margins (any sign)
and summed per-position KL divergences (never negative).

The function runs in the candidate process (lmr_bridge): `tdpo_loss` below sends its
arguments there and gets plain tensors back; gradients, autograd graphs and in-place
changes are observed by probes, which run beside the code and return plain data. Every
expected value is computed here, from inputs this file chose.
"""
import math

import pytest
import torch
from lmr_bridge import candidate, probe

_tensor = torch.tensor
_float32 = torch.float32
_float64 = torch.float64
_Tensor = torch.Tensor
_isfinite = torch.isfinite
_exp = math.exp
_log1p = math.log1p

tdpo_loss = candidate.function("trainers:tdpo_loss")

# ------------------------------------------------------------------------------ helpers


def _floats(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def check_close(actual, expected, what, rtol=1e-9, atol=1e-10):
    if isinstance(actual, _Tensor):
        got = _floats(actual)
    elif isinstance(actual, (list, tuple)):
        got = [float(v) for v in actual]
    else:
        got = [float(actual)]
    want = [float(v) for v in expected]
    assert len(got) == len(want), "%s: %d values expected, got %d" % (what, len(want), len(got))
    for i, (g, w) in enumerate(zip(got, want)):
        assert math.isfinite(g), "%s[%d] is %r" % (what, i, g)
        assert abs(g - w) <= atol + rtol * abs(w), "%s[%d]: expected %r, got %r" % (what, i, w, g)


def softplus(x):
    """log(1 + e^x) without overflow."""
    return max(x, 0.0) + _log1p(_exp(-abs(x)))


def sigmoid(x):
    return 1.0 / (1.0 + _exp(-x)) if x >= 0 else _exp(x) / (1.0 + _exp(x))


def preference_logit(mc, mr, kc, kr, alpha, tdpo2):
    """The argument of the sigmoid, before beta: margin difference minus the weighted KL gap."""
    weight = alpha if tdpo2 else 1.0
    return (mc - mr) - weight * (kr - kc)


def expected_losses(mc, mr, kc, kr, beta, alpha, tdpo2):
    return [softplus(-beta * preference_logit(a, b, c, d, alpha, tdpo2)) for a, b, c, d in zip(mc, mr, kc, kr)]


def t64(values):
    return _tensor(values, dtype=_float64)


def dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


@probe
def gradients(columns, options, wrt, dtype="float64", allow_unused=False):
    """In the candidate: the four columns as tensors of `dtype`, all requiring grad, the
    losses, and the gradient of their sum in the columns at the indices in `wrt`."""
    import torch
    from trainers import tdpo_loss

    ts = [torch.tensor(v, dtype=getattr(torch, dtype), requires_grad=True) for v in columns]
    losses, _, _ = tdpo_loss(*ts, **options)
    grads = torch.autograd.grad(losses.sum(), [ts[i] for i in wrt], allow_unused=allow_unused)
    return {"losses": losses.detach(), "grads": list(grads)}


@probe
def graph_of_the_outputs(columns, options):
    """In the candidate: whether each output is attached to the autograd graph (inputs requiring grad)."""
    import torch
    from trainers import tdpo_loss

    ts = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in columns]
    out = tdpo_loss(*ts, **options)
    return [{"requires_grad": bool(t.requires_grad), "has_grad_fn": t.grad_fn is not None} for t in out]


@probe
def inputs_after_two_calls(columns):
    """In the candidate: the input tensors' values after two calls that reuse them."""
    import torch
    from trainers import tdpo_loss

    inputs = [torch.tensor(v, dtype=torch.float64) for v in columns]
    tdpo_loss(*inputs, beta=0.5, alpha=0.5, if_tdpo2=True)
    tdpo_loss(*inputs, beta=0.5, alpha=0.5, if_tdpo2=False)
    return [[float(x) for x in t.tolist()] for t in inputs]


# Five preference pairs as the trainer produces them: log-ratio margins of either sign,
# position KLs >= 0.
MC = [-1.2, 0.4, 2.5, -3.1, 0.05]
MR = [0.7, -1.6, -0.3, 1.9, -0.2]
KC = [0.35, 1.1, 0.02, 2.4, 0.6]
KR = [0.9, 0.15, 1.7, 0.8, 0.05]


COLUMNS = [MC, MR, KC, KR]


def batch():
    return [t64(v) for v in COLUMNS]


# ------------------------------------------------------------------------------ the losses


@pytest.mark.parametrize("beta", [0.05, 0.1, 0.5, 2.0])
def test_tdpo1_losses(beta):
    losses, _, _ = tdpo_loss(*batch(), beta=beta, alpha=0.5, if_tdpo2=False)
    check_close(losses, expected_losses(MC, MR, KC, KR, beta, 0.5, False), "TDPO1 losses")


@pytest.mark.parametrize("beta,alpha", [(0.1, 0.5), (0.1, 0.1), (0.5, 0.3), (0.2, 2.0), (1.0, 0.75)])
def test_tdpo2_losses(beta, alpha):
    losses, _, _ = tdpo_loss(*batch(), beta=beta, alpha=alpha, if_tdpo2=True)
    check_close(losses, expected_losses(MC, MR, KC, KR, beta, alpha, True), "TDPO2 losses")


def test_defaults_are_tdpo2_with_alpha_one_half():
    losses, _, _ = tdpo_loss(*batch(), 0.1)
    check_close(losses, expected_losses(MC, MR, KC, KR, 0.1, 0.5, True), "losses with default alpha and if_tdpo2")


@pytest.mark.parametrize("alpha", [0.0, 0.5, 3.0])
def test_alpha_does_not_change_tdpo1(alpha):
    losses, _, _ = tdpo_loss(*batch(), beta=0.3, alpha=alpha, if_tdpo2=False)
    check_close(losses, expected_losses(MC, MR, KC, KR, 0.3, 0.5, False), "TDPO1 losses with alpha=%r" % alpha)


def test_tdpo2_with_alpha_one_has_the_tdpo1_value():
    # The two losses differ in their gradients only when alpha is 1.
    tdpo2, _, _ = tdpo_loss(*batch(), beta=0.4, alpha=1.0, if_tdpo2=True)
    tdpo1, _, _ = tdpo_loss(*batch(), beta=0.4, alpha=1.0, if_tdpo2=False)
    check_close(tdpo2, _floats(tdpo1), "TDPO2 (alpha 1) against TDPO1", rtol=1e-12)


def test_tdpo2_with_alpha_zero_is_dpo_on_the_margins():
    beta = 0.25
    losses, _, _ = tdpo_loss(*batch(), beta=beta, alpha=0.0, if_tdpo2=True)
    check_close(losses, [softplus(-beta * (a - b)) for a, b in zip(MC, MR)], "TDPO2 losses with alpha 0")


@pytest.mark.parametrize("tdpo2", [False, True])
def test_policy_equal_to_reference_gives_log_two(tdpo2):
    zeros = [0.0] * 4
    losses, _, _ = tdpo_loss(t64(zeros), t64(zeros), t64(zeros), t64(zeros), beta=0.1, alpha=0.5, if_tdpo2=tdpo2)
    check_close(losses, [math.log(2.0)] * 4, "losses", rtol=1e-12)


@pytest.mark.parametrize("tdpo2", [False, True])
def test_swapping_chosen_and_rejected_negates_the_logit(tdpo2):
    # softplus(-x) - softplus(x) = -x, so the two orders of a pair differ by beta times its logit.
    beta, alpha = 0.3, 0.6
    forward, _, _ = tdpo_loss(*batch(), beta=beta, alpha=alpha, if_tdpo2=tdpo2)
    swapped, _, _ = tdpo_loss(t64(MR), t64(MC), t64(KR), t64(KC), beta=beta, alpha=alpha, if_tdpo2=tdpo2)
    differences = [f - s for f, s in zip(_floats(forward), _floats(swapped))]
    expected = [-beta * preference_logit(a, b, c, d, alpha, tdpo2) for a, b, c, d in zip(MC, MR, KC, KR)]
    check_close(differences, expected, "loss(chosen, rejected) - loss(rejected, chosen)")


STEPS = [-4.0, -2.0, 0.0, 2.0, 4.0]


def _one_loss(mc, mr, kc, kr, tdpo2, beta=0.5, alpha=0.5):
    losses, _, _ = tdpo_loss(t64([mc]), t64([mr]), t64([kc]), t64([kr]), beta=beta, alpha=alpha, if_tdpo2=tdpo2)
    return _floats(losses)[0]


@pytest.mark.parametrize("tdpo2", [False, True])
def test_loss_falls_as_the_chosen_margin_grows(tdpo2):
    values = [_one_loss(m, 0.0, 0.5, 0.5, tdpo2) for m in STEPS]
    assert all(a > b for a, b in zip(values, values[1:])), values


@pytest.mark.parametrize("tdpo2", [False, True])
def test_loss_rises_as_the_rejected_margin_grows(tdpo2):
    values = [_one_loss(0.0, m, 0.5, 0.5, tdpo2) for m in STEPS]
    assert all(a < b for a, b in zip(values, values[1:])), values


@pytest.mark.parametrize("tdpo2", [False, True])
def test_loss_rises_with_the_rejected_kl(tdpo2):
    values = [_one_loss(0.5, -0.5, 0.4, k, tdpo2) for k in (0.0, 0.5, 1.0, 2.0, 4.0)]
    assert all(a < b for a, b in zip(values, values[1:])), values


# ------------------------------------------------------------------------------ the rewards


@pytest.mark.parametrize("beta,alpha,tdpo2", [(0.1, 0.5, False), (0.1, 0.5, True), (0.7, 2.0, True)])
def test_rewards(beta, alpha, tdpo2):
    _, chosen, rejected = tdpo_loss(*batch(), beta=beta, alpha=alpha, if_tdpo2=tdpo2)
    check_close(chosen, [beta * (m + k) for m, k in zip(MC, KC)], "chosen_rewards")
    check_close(rejected, [beta * (m + k) for m, k in zip(MR, KR)], "rejected_rewards")


# The candidate reports the graph (a claim); the gradient tests below check it with numbers.
def test_rewards_carry_no_gradient():
    _, chosen, rejected = graph_of_the_outputs(COLUMNS, {"beta": 0.1, "alpha": 0.5, "if_tdpo2": True})
    assert not chosen["requires_grad"] and not chosen["has_grad_fn"], "chosen_rewards carries gradient"
    assert not rejected["requires_grad"] and not rejected["has_grad_fn"], "rejected_rewards carries gradient"


# ------------------------------------------------------------------------------ gradients


@pytest.mark.parametrize("tdpo2", [False, True])
def test_losses_carry_gradient(tdpo2):
    losses, _, _ = graph_of_the_outputs(COLUMNS, {"beta": 0.1, "alpha": 0.5, "if_tdpo2": tdpo2})
    assert losses["requires_grad"] and losses["has_grad_fn"]


def _weights(beta, alpha, tdpo2):
    """beta * sigmoid(-beta * logit) per pair: minus the derivative of the loss in the logit."""
    return [beta * sigmoid(-beta * preference_logit(a, b, c, d, alpha, tdpo2)) for a, b, c, d in zip(MC, MR, KC, KR)]


@pytest.mark.parametrize("beta", [0.1, 0.5, 2.0])
def test_tdpo1_gradient(beta):
    got = gradients(COLUMNS, {"beta": beta, "alpha": 0.5, "if_tdpo2": False}, [0, 1, 2, 3])
    g_mc, g_mr, g_kc, g_kr = got["grads"]
    w = _weights(beta, 0.5, False)
    check_close(g_mc, [-x for x in w], "d loss / d chosen_logps_margin")
    check_close(g_mr, w, "d loss / d rejected_logps_margin")
    check_close(g_kc, [-x for x in w], "d loss / d chosen_position_kl")
    check_close(g_kr, w, "d loss / d rejected_position_kl")


@pytest.mark.parametrize("beta,alpha", [(0.1, 0.5), (0.5, 0.2), (2.0, 1.5)])
def test_tdpo2_gradient_in_the_margins_and_the_rejected_kl(beta, alpha):
    got = gradients(COLUMNS, {"beta": beta, "alpha": alpha, "if_tdpo2": True}, [0, 1, 3])
    g_mc, g_mr, g_kr = got["grads"]
    w = _weights(beta, alpha, True)
    check_close(g_mc, [-x for x in w], "d loss / d chosen_logps_margin")
    check_close(g_mr, w, "d loss / d rejected_logps_margin")
    check_close(g_kr, [alpha * x for x in w], "d loss / d rejected_position_kl")


@pytest.mark.parametrize("alpha", [0.5, 1.0])
def test_tdpo2_stops_the_gradient_of_the_chosen_kl(alpha):
    (g_kc,) = gradients(COLUMNS, {"beta": 0.5, "alpha": alpha, "if_tdpo2": True}, [2], allow_unused=True)["grads"]
    assert g_kc is None or all(v == 0.0 for v in _floats(g_kc)), "chosen_position_kl gets gradient %r" % (g_kc,)


# ------------------------------------------------------------------------------ the contract


@pytest.mark.parametrize("n", [1, 2, 5])
def test_returns_three_tensors_of_the_batch_shape(n):
    out = tdpo_loss(*[t[:n] for t in batch()], beta=0.1, alpha=0.5, if_tdpo2=True)
    assert isinstance(out, tuple) and len(out) == 3
    for t in out:
        assert isinstance(t, _Tensor) and tuple(t.shape) == (n,)


@pytest.mark.parametrize("tdpo2", [False, True])
@pytest.mark.parametrize("dtype", [_float32, _float64])
def test_outputs_keep_the_input_dtype(dtype, tdpo2):
    out = tdpo_loss(*[t.to(dtype) for t in batch()], beta=0.1, alpha=0.5, if_tdpo2=tdpo2)
    for t in out:
        assert t.dtype == dtype


def test_pairs_do_not_interact():
    whole, wc, wr = tdpo_loss(*batch(), beta=0.3, alpha=0.7, if_tdpo2=True)
    for i in range(len(MC)):
        one = [t[i:i + 1] for t in batch()]
        loss, c, r = tdpo_loss(*one, beta=0.3, alpha=0.7, if_tdpo2=True)
        check_close(loss, [_floats(whole)[i]], "loss of pair %d alone" % i, rtol=1e-12)
        check_close(c, [_floats(wc)[i]], "chosen reward of pair %d alone" % i, rtol=1e-12)
        check_close(r, [_floats(wr)[i]], "rejected reward of pair %d alone" % i, rtol=1e-12)


def test_inputs_are_left_unchanged():
    after = inputs_after_two_calls(COLUMNS)
    for t, v in zip(after, (MC, MR, KC, KR)):
        assert t == v


# ------------------------------------------------------------------------------ large values

# Long responses from a policy far from its reference: summed margins and KLs in the hundreds
# (what the trainer gives for responses of a few hundred tokens), so beta times the logit is
# far beyond where exp() or log(sigmoid()) of float32 over- or underflows.
BIG_MC = [-280.0, -460.0, 350.0, 300.0]
BIG_MR = [-440.0, -210.0, -120.0, -300.0]
BIG_KC = [240.0, 530.0, 15.0, 100.0]
BIG_KR = [410.0, 230.0, 600.0, 100.0]


BIG = [BIG_MC, BIG_MR, BIG_KC, BIG_KR]


def _big(dtype):
    return [_tensor(v, dtype=dtype) for v in BIG]


@pytest.mark.parametrize("tdpo2", [False, True])
@pytest.mark.parametrize("dtype", [_float32, _float64])
def test_large_values_give_finite_losses_and_gradients(dtype, tdpo2):
    got = gradients(BIG, {"beta": 1.0, "alpha": 0.5, "if_tdpo2": tdpo2}, [0, 1], dtype_name(dtype))
    losses = got["losses"]
    assert bool(_isfinite(losses).all()), losses
    for g in got["grads"]:
        assert bool(_isfinite(g).all()), g


@pytest.mark.parametrize("tdpo2", [False, True])
@pytest.mark.parametrize("dtype", [_float32, _float64])
def test_large_values_give_the_asymptotic_losses(dtype, tdpo2):
    # A hugely positive logit costs nothing; a hugely negative one costs beta times its size.
    losses, _, _ = tdpo_loss(*_big(dtype), beta=1.0, alpha=0.5, if_tdpo2=tdpo2)
    check_close(losses, expected_losses(BIG_MC, BIG_MR, BIG_KC, BIG_KR, 1.0, 0.5, tdpo2), "losses",
                rtol=1e-6, atol=1e-5)
