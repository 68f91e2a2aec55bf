"""Property tests for `preference_loss` (trainers.py), from the DPO paper and its variants.

Written for lmr (not upstream code). The closed forms below are the paper's equations,
evaluated in float64 with the standard library, independently of the code under test.

The function runs in the candidate process (lmr_bridge): `preference_loss` below sends its
arguments there and gets plain tensors back; gradients, autograd graphs and in-place
changes are observed by probes, which run beside the code and return plain data. Every
expected value is computed here, from inputs this file chose.
"""
import math

import pytest
import torch
from lmr_bridge import candidate, probe

_tensor = torch.tensor
_float64 = torch.float64
_float32 = torch.float32
_isfinite = torch.isfinite
_Tensor = torch.Tensor

preference_loss = candidate.function("trainers:preference_loss")


# ----------------------------------------------------------------------------- helpers


def _values(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def assert_close(actual, expected, rtol=1e-9, atol=1e-9, what=""):
    """actual: tensor or float; expected: list of floats or float (compared element-wise)."""
    a = _values(actual) if isinstance(actual, _Tensor) else [float(actual)]
    e = list(expected) if isinstance(expected, (list, tuple)) else [float(expected)]
    assert len(a) == len(e), "%s: expected %d values, got %d" % (what, len(e), len(a))
    for i, (x, y) in enumerate(zip(a, e)):
        assert math.isfinite(x), "%s[%d]: got %r" % (what, i, x)
        assert abs(x - y) <= atol + rtol * abs(y), "%s[%d]: expected %r, got %r" % (what, i, y, x)


def softplus(x):
    """log(1 + exp(x)), stable for any x (python floats)."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def expected_losses(pc, pr, rc, rr, beta, eps=0.0, ipo=False, reference_free=False):
    out = []
    for a, b, c, d in zip(pc, pr, rc, rr):
        h = (a - b) - (0.0 if reference_free else (c - d))
        if ipo:
            out.append((h - 1.0 / (2.0 * beta)) ** 2)
        else:
            out.append((1.0 - eps) * softplus(-beta * h) + eps * softplus(beta * h))
    return out


def t64(values, requires_grad=False):
    return _tensor(values, dtype=_float64, requires_grad=requires_grad)


def dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


@probe
def gradients(columns, beta, options, wrt, dtype="float64"):
    """In the candidate: the four columns as tensors of `dtype` (those at the indices in `wrt`
    requiring grad), the losses, and the gradient of their sum in each of `wrt`."""
    import torch
    from trainers import preference_loss

    ts = [torch.tensor(v, dtype=getattr(torch, dtype), requires_grad=i in wrt) for i, v in enumerate(columns)]
    losses, _, _ = preference_loss(*ts, beta, **options)
    grads = torch.autograd.grad(losses.sum(), [ts[i] for i in wrt])
    return {"losses": losses.detach(), "grads": list(grads)}


@probe
def graph_of_the_outputs(columns, beta):
    """In the candidate: whether each output is attached to the autograd graph (inputs requiring grad)."""
    import torch
    from trainers import preference_loss

    ts = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in columns]
    out = preference_loss(*ts, beta)
    return [{"requires_grad": bool(t.requires_grad), "has_grad_fn": t.grad_fn is not None} for t in out]


@probe
def inputs_after_two_calls(columns):
    """In the candidate: the input tensors' values after two calls that reuse them."""
    import torch
    from trainers import preference_loss

    cols = [torch.tensor(v, dtype=torch.float64) for v in columns]
    preference_loss(*cols, 0.2, label_smoothing=0.1)
    preference_loss(*cols, 0.2, ipo=True)
    return [[float(x) for x in t.tolist()] for t in cols]


PC = [-12.5, -40.0, -3.25, -7.0, -19.0]
PR = [-14.0, -35.5, -9.0, -7.0, -2.5]
RC = [-13.0, -38.0, -5.0, -6.5, -18.0]
RR = [-13.5, -36.0, -8.0, -7.5, -3.0]


# ----------------------------------------------------------------------- the three losses


@pytest.mark.parametrize("beta", [0.05, 0.1, 0.5, 3.0])
def test_dpo_loss_is_minus_log_sigmoid_of_scaled_margin(beta):
    losses, _, _ = preference_loss(t64(PC), t64(PR), t64(RC), t64(RR), beta)
    assert_close(losses, expected_losses(PC, PR, RC, RR, beta), what="losses")


@pytest.mark.parametrize("beta,eps", [(0.1, 0.1), (0.5, 0.3), (2.0, 0.45), (0.2, 1.0)])
def test_conservative_dpo_mixes_both_labels(beta, eps):
    losses, _, _ = preference_loss(t64(PC), t64(PR), t64(RC), t64(RR), beta, label_smoothing=eps)
    assert_close(losses, expected_losses(PC, PR, RC, RR, beta, eps), what="losses")


@pytest.mark.parametrize("beta", [0.01, 0.1, 0.5, 2.0])
def test_ipo_loss_is_squared_distance_to_half_inverse_beta(beta):
    losses, _, _ = preference_loss(t64(PC), t64(PR), t64(RC), t64(RR), beta, ipo=True)
    assert_close(losses, expected_losses(PC, PR, RC, RR, beta, ipo=True), rtol=1e-10, what="losses")


def test_ipo_ignores_label_smoothing():
    plain, _, _ = preference_loss(t64(PC), t64(PR), t64(RC), t64(RR), 0.25, ipo=True)
    smoothed, _, _ = preference_loss(t64(PC), t64(PR), t64(RC), t64(RR), 0.25, label_smoothing=0.3, ipo=True)
    assert_close(smoothed, _values(plain), rtol=0, atol=0, what="ipo losses with label smoothing")


@pytest.mark.parametrize("kwargs", [{}, {"label_smoothing": 0.2}, {"ipo": True}])
def test_reference_free_loss_uses_the_policy_margin_only(kwargs):
    beta = 0.3
    losses, _, _ = preference_loss(t64(PC), t64(PR), t64(RC), t64(RR), beta, reference_free=True, **kwargs)
    expected = expected_losses(PC, PR, RC, RR, beta, kwargs.get("label_smoothing", 0.0), kwargs.get("ipo", False), True)
    assert_close(losses, expected, what="losses")


@pytest.mark.parametrize("kwargs", [{}, {"label_smoothing": 0.2}, {"ipo": True}])
def test_reference_free_loss_does_not_depend_on_the_reference(kwargs):
    beta = 0.3
    losses, _, _ = preference_loss(t64(PC), t64(PR), t64(RC), t64(RR), beta, reference_free=True, **kwargs)
    other, _, _ = preference_loss(t64(PC), t64(PR), t64(RR), t64(RC), beta, reference_free=True, **kwargs)
    assert_close(other, _values(losses), rtol=0, atol=0, what="losses with other reference values")


# ------------------------------------------------------------------------------ rewards


@pytest.mark.parametrize("kwargs", [{}, {"label_smoothing": 0.2}, {"ipo": True}, {"reference_free": True}])
def test_rewards_are_beta_times_policy_minus_reference(kwargs):
    beta = 0.7
    _, chosen, rejected = preference_loss(t64(PC), t64(PR), t64(RC), t64(RR), beta, **kwargs)
    assert_close(chosen, [beta * (a - c) for a, c in zip(PC, RC)], what="chosen_rewards")
    assert_close(rejected, [beta * (b - d) for b, d in zip(PR, RR)], what="rejected_rewards")


# The candidate reports the graph (a claim); the gradient tests below check it with numbers.
def test_rewards_carry_no_gradient():
    _, chosen, rejected = graph_of_the_outputs([PC, PR, RC, RR], 0.1)
    assert not chosen["requires_grad"] and not chosen["has_grad_fn"], "chosen_rewards carries gradient"
    assert not rejected["requires_grad"] and not rejected["has_grad_fn"], "rejected_rewards carries gradient"


def test_losses_carry_gradient():
    losses, _, _ = graph_of_the_outputs([PC, PR, RC, RR], 0.1)
    assert losses["requires_grad"] and losses["has_grad_fn"]


# -------------------------------------------------------------- shapes, dtypes, batch size


def _random_batch(n, dtype):
    gen = torch.Generator().manual_seed(n)
    return [(torch.rand(n, generator=gen, dtype=_float64) * -30.0 - 1.0).to(dtype) for _ in range(4)]


@pytest.mark.parametrize("n", [1, 2, 7])
def test_returns_three_per_example_tensors(n):
    out = preference_loss(*_random_batch(n, _float64), 0.1)
    assert isinstance(out, tuple) and len(out) == 3
    for t in out:
        assert isinstance(t, _Tensor)
        assert tuple(t.shape) == (n,)


@pytest.mark.parametrize("kwargs", [{}, {"label_smoothing": 0.2}, {"ipo": True}])
@pytest.mark.parametrize("dtype", [_float32, _float64])
def test_outputs_keep_the_input_dtype(dtype, kwargs):
    out = preference_loss(*_random_batch(4, dtype), 0.1, **kwargs)
    for t in out:
        assert t.dtype == dtype


def test_batch_size_one_gives_the_pair_loss():
    losses, _, _ = preference_loss(t64([-4.0]), t64([-6.0]), t64([-5.0]), t64([-5.5]), 0.5)
    h = (-4.0 + 6.0) - (-5.0 + 5.5)
    assert_close(losses, [softplus(-0.5 * h)], what="losses")


def test_batch_size_one_gives_the_pair_rewards():
    _, chosen, rejected = preference_loss(t64([-4.0]), t64([-6.0]), t64([-5.0]), t64([-5.5]), 0.5)
    assert_close(chosen, [0.5 * (-4.0 + 5.0)], what="chosen_rewards")
    assert_close(rejected, [0.5 * (-6.0 + 5.5)], what="rejected_rewards")


def test_examples_do_not_interact():
    beta = 0.4
    whole, wc, wr = preference_loss(t64(PC), t64(PR), t64(RC), t64(RR), beta, label_smoothing=0.1)
    for i in range(len(PC)):
        one, c, r = preference_loss(t64(PC[i:i + 1]), t64(PR[i:i + 1]), t64(RC[i:i + 1]), t64(RR[i:i + 1]), beta, label_smoothing=0.1)
        assert_close(one, [_values(whole)[i]], rtol=1e-12, what="loss %d alone" % i)
        assert_close(c, [_values(wc)[i]], rtol=1e-12, what="chosen reward %d alone" % i)
        assert_close(r, [_values(wr)[i]], rtol=1e-12, what="rejected reward %d alone" % i)


def test_inputs_are_not_modified():
    after = inputs_after_two_calls([PC, PR, RC, RR])
    for t, v in zip(after, (PC, PR, RC, RR)):
        assert t == v


# ------------------------------------------------------------------- properties of DPO


@pytest.mark.parametrize("beta", [0.01, 0.1, 1.0, 10.0])
@pytest.mark.parametrize("eps", [0.0, 0.2])
def test_zero_margin_gives_log_two(beta, eps):
    # Policy equal to the reference: the implicit reward margin is 0, loss = log 2.
    losses, _, _ = preference_loss(t64(PC), t64(PR), t64(PC), t64(PR), beta, label_smoothing=eps)
    assert_close(losses, [math.log(2.0)] * len(PC), rtol=1e-12, what="losses")


STEPS = [-14.0, -12.0, -10.0, -8.0, -6.0]


def _loss(pc, pr, rc, rr, beta=0.2):
    return _values(preference_loss(t64([pc]), t64([pr]), t64([rc]), t64([rr]), beta)[0])[0]


def test_loss_falls_as_the_policy_favours_the_chosen_response():
    losses = [_loss(c, -10.0, -10.0, -10.0) for c in STEPS]
    assert all(a > b for a, b in zip(losses, losses[1:])), losses


def test_loss_rises_as_the_policy_favours_the_rejected_response():
    losses = [_loss(-10.0, r, -10.0, -10.0) for r in STEPS]
    assert all(a < b for a, b in zip(losses, losses[1:])), losses


def test_loss_rises_as_the_reference_favours_the_chosen_response():
    # The same policy margin is worth less when the reference already preferred the chosen answer.
    losses = [_loss(-9.0, -11.0, c, -10.0) for c in STEPS]
    assert all(a < b for a, b in zip(losses, losses[1:])), losses


def test_label_smoothing_is_a_label_flip():
    # Smoothing e on (chosen, rejected) equals smoothing 1 - e on the swapped pair.
    beta, eps = 0.3, 0.2
    a, _, _ = preference_loss(t64(PC), t64(PR), t64(RC), t64(RR), beta, label_smoothing=eps)
    b, _, _ = preference_loss(t64(PR), t64(PC), t64(RR), t64(RC), beta, label_smoothing=1.0 - eps)
    assert_close(a, _values(b), rtol=1e-12, what="losses")


@pytest.mark.parametrize("beta,eps", [(0.1, 0.0), (0.5, 0.0), (0.5, 0.25), (2.0, 0.1)])
def test_dpo_gradient_matches_the_closed_form(beta, eps):
    g_pc, g_pr, g_rc, g_rr = gradients([PC, PR, RC, RR], beta, {"label_smoothing": eps}, [0, 1, 2, 3])["grads"]
    expected = []
    for a, b, c, d in zip(PC, PR, RC, RR):
        z = beta * ((a - b) - (c - d))
        expected.append(-beta * (1.0 - eps) * sigmoid(-z) + beta * eps * sigmoid(z))
    assert_close(g_pc, expected, what="d loss / d policy_chosen")
    assert_close(g_pr, [-g for g in expected], what="d loss / d policy_rejected")
    assert_close(g_rc, [-g for g in expected], what="d loss / d reference_chosen")
    assert_close(g_rr, expected, what="d loss / d reference_rejected")


@pytest.mark.parametrize("beta", [0.1, 0.5, 2.0])
def test_gradient_pushes_chosen_up_and_rejected_down(beta):
    g_pc, g_pr = gradients([PC, PR, RC, RR], beta, {}, [0, 1])["grads"]
    assert all(g < 0 for g in _values(g_pc)), _values(g_pc)
    assert all(g > 0 for g in _values(g_pr)), _values(g_pr)


def test_dpo_gradient_weights_wrongly_ordered_pairs_more():
    # The per-example weight sigmoid(-beta h) is larger when the implicit reward ranks wrongly.
    (g,) = gradients([[-5.0, -9.0], [-9.0, -5.0], [-7.0, -7.0], [-7.0, -7.0]], 0.5, {}, [0])["grads"]
    right, wrong = _values(g)
    assert wrong < right < 0


def test_ipo_gradient():
    beta = 0.25
    g_pc, g_pr = gradients([PC, PR, RC, RR], beta, {"ipo": True}, [0, 1])["grads"]
    expected = [2.0 * (((a - b) - (c - d)) - 1.0 / (2.0 * beta)) for a, b, c, d in zip(PC, PR, RC, RR)]
    assert_close(g_pc, expected, what="d loss / d policy_chosen")
    assert_close(g_pr, [-g for g in expected], what="d loss / d policy_rejected")


# ------------------------------------------------------------------------ extreme values


# |beta * margin| of about 4,500 and 10,000: exp() of that overflows in float32 and float64.
BIG_BETA = 5.0
BIG_PC = [-1.0, -900.0, -2.0]
BIG_PR = [-900.0, -1.0, -2000.0]
BIG_REF = [-5.0, -5.0, -5.0]
BIG_H = [(a - b) for a, b in zip(BIG_PC, BIG_PR)]  # the reference margin is 0


def _big(dtype):
    return (_tensor(BIG_PC, dtype=dtype), _tensor(BIG_PR, dtype=dtype),
            _tensor(BIG_REF, dtype=dtype), _tensor(BIG_REF, dtype=dtype))


def _big_gradient(dtype):
    """The losses and the gradient in policy_chosen_logps (the only input requiring grad)."""
    got = gradients([BIG_PC, BIG_PR, BIG_REF, BIG_REF], BIG_BETA, {}, [0], dtype_name(dtype))
    return got["losses"], got["grads"][0]


@pytest.mark.parametrize("dtype", [_float32, _float64])
def test_large_margins_stay_finite(dtype):
    losses, g = _big_gradient(dtype)
    assert bool(_isfinite(losses).all()), losses
    assert bool(_isfinite(g).all()), g


@pytest.mark.parametrize("dtype", [_float32, _float64])
def test_large_margins_have_the_asymptotic_loss(dtype):
    # A huge positive margin costs nothing; a huge negative one costs beta * |margin|.
    losses, _, _ = preference_loss(*_big(dtype), BIG_BETA)
    expected = [softplus(-BIG_BETA * h) for h in BIG_H]
    assert_close(losses, expected, rtol=1e-6, atol=1e-6, what="losses")


@pytest.mark.parametrize("dtype", [_float32, _float64])
def test_large_margins_have_the_asymptotic_gradient(dtype):
    _, g = _big_gradient(dtype)
    assert_close(g, [-BIG_BETA * sigmoid(-BIG_BETA * h) for h in BIG_H], rtol=1e-6, atol=1e-6, what="gradient")


@pytest.mark.parametrize("dtype", [_float32, _float64])
def test_conservative_dpo_at_large_margins(dtype):
    eps = 0.1
    losses, _, _ = preference_loss(*_big(dtype), BIG_BETA, label_smoothing=eps)
    expected = [(1.0 - eps) * softplus(-BIG_BETA * h) + eps * softplus(BIG_BETA * h) for h in BIG_H]
    assert_close(losses, expected, rtol=1e-6, atol=1e-6, what="label-smoothed losses")


def test_empty_batch():
    e = torch.zeros(0, dtype=_float64)
    out = preference_loss(e, e, e, e, 0.1)
    assert len(out) == 3
    for t in out:
        assert tuple(t.shape) == (0,)
