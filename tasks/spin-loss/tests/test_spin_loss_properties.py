"""Property tests for `SPINTrainer.spin_loss` (spin/alignment/trainer.py), from the SPIN paper.

Written for lmr (not upstream code). The expected values are computed here in float64 with
the standard library, from the paper's objective (Section 4: the main player's log-ratio
of the real response over the synthetic one, measured against the opponent's, scaled by
the regularisation parameter and passed through the loss function; logistic by default,
hinge as the option the trainer offers), independently of the code under test.

The trainer is not constructed (its constructor needs models, datasets and an
accelerator); `self` is made with object.__new__ and given `beta` and `loss_type`, the two
attributes the constructor stores for the method. Inputs are what `get_batch_metrics`
passes: summed response log-probabilities, always negative, the main player's carrying
gradient.

The trainer lives in the candidate process (lmr_bridge): each call below builds one there
(the probes `spin_loss_call`, `gradients`, ...), sends the inputs and gets plain tensors
back; gradients, autograd graphs and in-place changes are observed there and returned as
data. Every expected value is computed here, from inputs this file chose.
"""
import math

import pytest
import torch
from lmr_bridge import probe, probe_helper

_tensor = torch.tensor
_float32 = torch.float32
_float64 = torch.float64
_Tensor = torch.Tensor
_isfinite = torch.isfinite
_exp = math.exp
_log1p = math.log1p

# ------------------------------------------------------------------------------ helpers


@probe_helper
def build_trainer(beta, loss_type):
    """In the candidate: a SPINTrainer without its constructor, with the two attributes the method reads."""
    from spin.alignment.trainer import SPINTrainer

    trainer = object.__new__(SPINTrainer)
    trainer.beta = beta
    trainer.loss_type = loss_type
    return trainer


@probe
def spin_loss_call(beta, loss_type, args, kwargs):
    """In the candidate: spin_loss of a trainer with these settings; its result as it is."""
    return build_trainer(beta, loss_type).spin_loss(*args, **kwargs)


@probe
def gradients(beta, loss_type, columns, dtype="float64"):
    """In the candidate: the four columns as tensors of `dtype`, the main player's two requiring
    grad (as in the trainer), the losses, and the gradient of their sum in those two."""
    import torch

    ts = [torch.tensor(v, dtype=getattr(torch, dtype), requires_grad=i < 2) for i, v in enumerate(columns)]
    losses, _, _ = build_trainer(beta, loss_type).spin_loss(*ts)
    return {"losses": losses.detach(), "grads": list(torch.autograd.grad(losses.sum(), ts[:2]))}


@probe
def graph_of_the_outputs(beta, loss_type, columns):
    """In the candidate: whether each output is attached to the autograd graph (main player's inputs requiring grad)."""
    import torch

    ts = [torch.tensor(v, dtype=torch.float64, requires_grad=i < 2) for i, v in enumerate(columns)]
    out = build_trainer(beta, loss_type).spin_loss(*ts)
    return [{"requires_grad": bool(t.requires_grad), "has_grad_fn": t.grad_fn is not None} for t in out]


@probe
def state_after_two_calls(beta, loss_type, columns):
    """In the candidate: the inputs' values and the trainer's two attributes after two calls."""
    import torch

    trainer = build_trainer(beta, loss_type)
    inputs = [torch.tensor(v, dtype=torch.float64) for v in columns]
    trainer.spin_loss(*inputs)
    trainer.spin_loss(*inputs, reference_free=True)
    return {"inputs": [[float(x) for x in t.tolist()] for t in inputs], "beta": trainer.beta, "loss_type": trainer.loss_type}


class Trainer:
    """The settings of the trainer the candidate builds for each call."""

    def __init__(self, beta, loss_type):
        self.beta = beta
        self.loss_type = loss_type

    def spin_loss(self, *args, **kwargs):
        return spin_loss_call(self.beta, self.loss_type, list(args), kwargs)


def make_trainer(beta, loss_type="sigmoid"):
    return Trainer(beta, loss_type)


def dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


def _floats(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def check_close(actual, expected, what, rtol=1e-9, atol=1e-10):
    got = _floats(actual) if isinstance(actual, _Tensor) else [float(v) for v in actual]
    want = [float(v) for v in expected]
    assert len(got) == len(want), "%s: %d values expected, got %d" % (what, len(want), len(got))
    for i, (g, w) in enumerate(zip(got, want)):
        assert math.isfinite(g), "%s[%d] is %r" % (what, i, g)
        assert abs(g - w) <= atol + rtol * abs(w), "%s[%d]: expected %r, got %r" % (what, i, w, g)


def softplus(x):
    return max(x, 0.0) + _log1p(_exp(-abs(x)))


def sigmoid(x):
    return 1.0 / (1.0 + _exp(-x)) if x >= 0 else _exp(x) / (1.0 + _exp(x))


def logit(pr, pg, orr, og, reference_free=False):
    """Main player's log-ratio of real over generated, minus the opponent's (0 when reference-free)."""
    return (pr - pg) - (0.0 if reference_free else (orr - og))


def expected_losses(columns, beta, loss_type, reference_free=False):
    out = []
    for pr, pg, orr, og in zip(*columns):
        t = beta * logit(pr, pg, orr, og, reference_free)
        out.append(softplus(-t) if loss_type == "sigmoid" else max(0.0, 1.0 - t))
    return out


def t64(values):
    return _tensor(values, dtype=_float64)


# Five prompts as the trainer sees them: summed log-probabilities of the real (human) and the
# generated (opponent-sampled) response under the main player and under the opponent. The
# opponent gives its own samples a high likelihood; the main player has moved a little.
PR = [-18.2, -35.6, -7.1, -22.4, -12.9]   # main player, real responses
PG = [-10.4, -9.8, -13.6, -6.2, -11.5]    # main player, generated responses
OR = [-19.0, -34.1, -8.3, -23.9, -12.2]   # opponent, real responses
OG = [-9.7, -10.9, -12.8, -5.1, -12.4]    # opponent, generated responses
COLUMNS = (PR, PG, OR, OG)


def batch(dtype=_float64):
    return [_tensor(v, dtype=dtype) for v in COLUMNS]


# ------------------------------------------------------------------------------ the losses


@pytest.mark.parametrize("beta", [0.05, 0.1, 0.5, 2.0])
def test_logistic_losses(beta):
    losses, _, _ = make_trainer(beta, "sigmoid").spin_loss(*batch())
    check_close(losses, expected_losses(COLUMNS, beta, "sigmoid"), "sigmoid losses")


@pytest.mark.parametrize("beta", [0.1, 0.5, 2.0])
def test_hinge_losses(beta):
    losses, _, _ = make_trainer(beta, "hinge").spin_loss(*batch())
    check_close(losses, expected_losses(COLUMNS, beta, "hinge"), "hinge losses")


def test_hinge_is_zero_beyond_the_margin():
    # beta * logit above 1 on pairs 0, 2 and 3, below 1 on pairs 1 and 4.
    beta = 2.0
    losses, _, _ = make_trainer(beta, "hinge").spin_loss(*batch())
    for i, (value, t) in enumerate(zip(_floats(losses), [beta * logit(*p) for p in zip(*COLUMNS)])):
        if t > 1.0:
            assert value == 0.0, "pair %d: beta * logit = %r > 1, loss %r" % (i, t, value)
        else:
            assert value > 0.0, "pair %d: beta * logit = %r < 1, loss %r" % (i, t, value)


@pytest.mark.parametrize("loss_type", ["sigmoid", "hinge"])
def test_reference_free_losses(loss_type):
    losses, _, _ = make_trainer(0.5, loss_type).spin_loss(*batch(), reference_free=True)
    check_close(losses, expected_losses(COLUMNS, 0.5, loss_type, reference_free=True), "reference-free losses")


@pytest.mark.parametrize("loss_type", ["sigmoid", "hinge"])
def test_reference_free_ignores_the_opponent(loss_type):
    trainer = make_trainer(0.3, loss_type)
    pr, pg, orr, og = batch()
    a, _, _ = trainer.spin_loss(pr, pg, orr, og, reference_free=True)
    b, _, _ = trainer.spin_loss(pr, pg, orr - 7.0, og + 3.0, reference_free=True)
    check_close(a, _floats(b), "losses with another opponent", rtol=1e-12)


@pytest.mark.parametrize("loss_type,value", [("sigmoid", math.log(2.0)), ("hinge", 1.0)])
def test_main_player_equal_to_opponent(loss_type, value):
    # The first step of an iteration: the main player starts from the opponent's weights.
    losses, _, _ = make_trainer(0.1, loss_type).spin_loss(t64(PR), t64(PG), t64(PR), t64(PG))
    check_close(losses, [value] * len(PR), "losses", rtol=1e-12)


def test_logistic_swap_negates_the_logit():
    # softplus(-x) - softplus(x) = -x: real and generated swapped differ by beta times the logit.
    beta = 0.4
    trainer = make_trainer(beta, "sigmoid")
    forward, _, _ = trainer.spin_loss(t64(PR), t64(PG), t64(OR), t64(OG))
    swapped, _, _ = trainer.spin_loss(t64(PG), t64(PR), t64(OG), t64(OR))
    differences = [f - s for f, s in zip(_floats(forward), _floats(swapped))]
    check_close(differences, [-beta * logit(*p) for p in zip(*COLUMNS)], "loss(real, generated) - loss(generated, real)")


# With beta 0.04, beta times the logit stays in [-0.4, 0.4]: inside the hinge's margin, where
# the hinge loss is strictly monotone too.
STEPS = [-30.0, -25.0, -20.0, -15.0, -10.0]


def _one(pr, pg, orr, og, loss_type, beta=0.04):
    losses, _, _ = make_trainer(beta, loss_type).spin_loss(t64([pr]), t64([pg]), t64([orr]), t64([og]))
    return _floats(losses)[0]


@pytest.mark.parametrize("loss_type", ["sigmoid", "hinge"])
def test_loss_falls_as_the_real_response_gets_likelier(loss_type):
    values = [_one(p, -20.0, -20.0, -20.0, loss_type) for p in STEPS]
    assert all(a > b for a, b in zip(values, values[1:])), values


@pytest.mark.parametrize("loss_type", ["sigmoid", "hinge"])
def test_loss_rises_as_the_generated_response_gets_likelier(loss_type):
    values = [_one(-20.0, p, -20.0, -20.0, loss_type) for p in STEPS]
    assert all(a < b for a, b in zip(values, values[1:])), values


# ------------------------------------------------------------------------------ gradients


@pytest.mark.parametrize("beta", [0.1, 0.5, 2.0])
def test_logistic_gradient(beta):
    # As in the trainer, only the main player's log-probabilities carry gradient.
    g_real, g_generated = gradients(beta, "sigmoid", COLUMNS)["grads"]
    w = [beta * sigmoid(-beta * logit(*p)) for p in zip(*COLUMNS)]
    check_close(g_real, [-x for x in w], "d loss / d policy_real_logps")
    check_close(g_generated, w, "d loss / d policy_generated_logps")


def test_hinge_gradient():
    beta = 2.0
    g_real, g_generated = gradients(beta, "hinge", COLUMNS)["grads"]
    inside = [beta * logit(*p) < 1.0 for p in zip(*COLUMNS)]
    check_close(g_real, [-beta if on else 0.0 for on in inside], "d loss / d policy_real_logps")
    check_close(g_generated, [beta if on else 0.0 for on in inside], "d loss / d policy_generated_logps")


@pytest.mark.parametrize("loss_type", ["sigmoid", "hinge"])
def test_losses_carry_gradient(loss_type):
    # The candidate reports the graph (a claim); the gradient tests above check it with numbers.
    losses, _, _ = graph_of_the_outputs(0.1, loss_type, COLUMNS)
    assert losses["requires_grad"] and losses["has_grad_fn"]


# ------------------------------------------------------------------------------ the rewards


@pytest.mark.parametrize("loss_type,reference_free", [("sigmoid", False), ("hinge", False), ("sigmoid", True)])
def test_rewards(loss_type, reference_free):
    beta = 0.7
    _, real, generated = make_trainer(beta, loss_type).spin_loss(*batch(), reference_free=reference_free)
    check_close(real, [beta * (p - o) for p, o in zip(PR, OR)], "real_rewards")
    check_close(generated, [beta * (p - o) for p, o in zip(PG, OG)], "generated_rewards")


def test_rewards_carry_no_gradient():
    _, real, generated = graph_of_the_outputs(0.1, "sigmoid", COLUMNS)
    assert not real["requires_grad"] and not real["has_grad_fn"], "real_rewards carries gradient"
    assert not generated["requires_grad"] and not generated["has_grad_fn"], "generated_rewards carries gradient"


# ------------------------------------------------------------------------------ the contract


@pytest.mark.parametrize("loss_type", ["ipo", "dpo", "Sigmoid"])
def test_unknown_loss_type_raises_value_error(loss_type):
    with pytest.raises(ValueError):
        make_trainer(0.1, loss_type).spin_loss(*batch())


@pytest.mark.parametrize("n", [1, 2, 5])
def test_returns_three_tensors_of_the_batch_shape(n):
    out = make_trainer(0.1, "sigmoid").spin_loss(*[t[:n] for t in batch()])
    assert isinstance(out, tuple) and len(out) == 3
    for t in out:
        assert isinstance(t, _Tensor) and tuple(t.shape) == (n,)


@pytest.mark.parametrize("loss_type", ["sigmoid", "hinge"])
@pytest.mark.parametrize("dtype", [_float32, _float64])
def test_outputs_keep_the_input_dtype(dtype, loss_type):
    out = make_trainer(0.1, loss_type).spin_loss(*batch(dtype=dtype))
    for t in out:
        assert t.dtype == dtype


def test_pairs_do_not_interact():
    trainer = make_trainer(0.3, "sigmoid")
    whole, wr, wg = trainer.spin_loss(*batch())
    for i in range(len(PR)):
        loss, r, g = trainer.spin_loss(*[t[i:i + 1] for t in batch()])
        check_close(loss, [_floats(whole)[i]], "loss of prompt %d alone" % i, rtol=1e-12)
        check_close(r, [_floats(wr)[i]], "real reward of prompt %d alone" % i, rtol=1e-12)
        check_close(g, [_floats(wg)[i]], "generated reward of prompt %d alone" % i, rtol=1e-12)


def test_inputs_and_trainer_are_left_unchanged():
    after = state_after_two_calls(0.5, "hinge", list(COLUMNS))
    for t, v in zip(after["inputs"], COLUMNS):
        assert t == v
    assert after["beta"] == 0.5 and after["loss_type"] == "hinge"


# ------------------------------------------------------------------------------ large values

# Long responses from a main player far from the opponent (what the trainer gives for a few
# hundred tokens): beta times the logit in the hundreds, where exp() or log(sigmoid()) of
# float32 over- or underflows.
BIG = ([-220.0, -1530.0, -390.0, -980.0], [-820.0, -870.0, -900.0, -540.0],
       [-140.0, -800.0, -200.0, -540.0], [-280.0, -260.0, -280.0, -180.0])


def _big(dtype):
    return [_tensor(v, dtype=dtype) for v in BIG]


@pytest.mark.parametrize("dtype", [_float32, _float64])
def test_large_values_give_finite_losses_and_gradients(dtype):
    got = gradients(1.0, "sigmoid", list(BIG), dtype_name(dtype))
    losses = got["losses"]
    assert bool(_isfinite(losses).all()), losses
    for g in got["grads"]:
        assert bool(_isfinite(g).all()), g


@pytest.mark.parametrize("dtype", [_float32, _float64])
def test_large_values_give_the_asymptotic_losses(dtype):
    losses, _, _ = make_trainer(1.0, "sigmoid").spin_loss(*_big(dtype))
    check_close(losses, expected_losses(BIG, 1.0, "sigmoid"), "losses", rtol=1e-6, atol=1e-5)
