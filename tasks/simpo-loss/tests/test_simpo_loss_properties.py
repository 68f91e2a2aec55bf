"""Property tests for SimPOTrainer.simpo_loss (scripts/simpo_trainer.py), from the paper.

The method receives the length-normalised log-likelihoods of Eq. (3), one per chosen and
one per rejected response, as SimPOTrainer.concatenated_forward computes them
(get_batch_logps with average_log_prob=True). With reward beta * p (Eq. 4) and target
margin gamma = gamma_beta_ratio * beta, the sigmoid loss of one pair is Eq. (6) without
the expectation: -log sigmoid(beta * (p_w - p_l) - gamma). The options the paper does not
define (label smoothing of the sigmoid loss, the hinge loss) follow the contract stated in
the instruction. The oracle below is written from those definitions in plain Python
floats (a stable softplus), independent of torch.

The trainer lives in the candidate process (lmr_bridge): each call below builds one there
from its four hyper-parameters (probes `simpo_loss_call`, `gradients_of_the_losses`, ...),
sends the inputs, and gets plain tensors back; gradients and in-place changes are observed
there and returned as data. Every expected value is computed here, from inputs this file
chose.
"""
import math
import random

import pytest
import torch
from lmr_bridge import probe, probe_helper

_isclose = math.isclose
CONFIGS = [(2.0, 0.25), (2.0, 0.8), (2.5, 0.1), (2.0, 0.5), (2.5, 0.55), (10.0, 0.3), (10.0, 0.5)]


@probe_helper
def build_trainer(settings):
    """In the candidate: a SimPOTrainer without its constructor, with only what the loss reads."""
    from accelerate import Accelerator
    from simpo_trainer import SimPOTrainer

    trainer = object.__new__(SimPOTrainer)
    trainer.beta = settings["beta"]
    trainer.gamma_beta_ratio = settings["gamma_beta_ratio"]
    trainer.loss_type = settings["loss_type"]
    trainer.label_smoothing = settings["label_smoothing"]
    trainer.sft_weight = 0.0
    trainer.accelerator = Accelerator(cpu=True)
    return trainer


@probe
def simpo_loss_call(settings, chosen, rejected):
    """In the candidate: simpo_loss of a trainer with these settings; its result as it is."""
    return build_trainer(settings).simpo_loss(chosen, rejected)


@probe
def gradients_of_the_losses(settings, chosen, rejected):
    """In the candidate: the gradient of the summed losses in each input (both requiring grad)."""
    chosen = chosen.detach().requires_grad_(True)
    rejected = rejected.detach().requires_grad_(True)
    losses, _, _ = build_trainer(settings).simpo_loss(chosen, rejected)
    losses.sum().backward()
    return [chosen.grad, rejected.grad]


@probe
def inputs_after_the_call(settings, chosen, rejected):
    """In the candidate: the inputs' values after a call (both requiring grad, as in training)."""
    chosen = chosen.detach().requires_grad_(True)
    rejected = rejected.detach().requires_grad_(True)
    build_trainer(settings).simpo_loss(chosen, rejected)
    return [chosen.detach(), rejected.detach()]


@probe
def loss_of_the_trainers_own_logps(settings, logits, labels, pairs):
    """In the candidate: get_batch_logps (upstream code, not masked) on the logits, averaged per
    response as concatenated_forward asks for it, then simpo_loss on the two halves."""
    from simpo_trainer import SimPOTrainer

    all_logps = SimPOTrainer.get_batch_logps(logits, labels, average_log_prob=True, label_pad_token_id=-100)
    losses, chosen_rewards, _ = build_trainer(settings).simpo_loss(all_logps[:pairs], all_logps[pairs:])
    return {"losses": losses, "chosen_rewards": chosen_rewards}


class Trainer:
    """The settings of the trainer the candidate builds for each call."""

    def __init__(self, settings):
        self.settings = settings

    def simpo_loss(self, chosen, rejected):
        return simpo_loss_call(self.settings, chosen, rejected)


def make_trainer(beta=2.0, gamma_beta_ratio=0.25, loss_type="sigmoid", label_smoothing=0.0):
    return Trainer({"beta": beta, "gamma_beta_ratio": gamma_beta_ratio, "loss_type": loss_type, "label_smoothing": label_smoothing})


def softplus(z):
    return max(z, 0.0) + math.log1p(math.exp(-abs(z)))


def margin(beta, gamma_beta_ratio, chosen, rejected):
    """beta * p_w - beta * p_l - gamma, the argument of the sigmoid in Eq. (6)."""
    return beta * chosen - beta * rejected - gamma_beta_ratio * beta


def oracle_sigmoid(beta, gamma_beta_ratio, chosen, rejected, label_smoothing=0.0):
    z = margin(beta, gamma_beta_ratio, chosen, rejected)
    return (1.0 - label_smoothing) * softplus(-z) + label_smoothing * softplus(z)


def oracle_hinge(beta, gamma_beta_ratio, chosen, rejected):
    return max(0.0, 1.0 - margin(beta, gamma_beta_ratio, chosen, rejected))


def average_logps(rng, n):
    """Length-normalised log-likelihoods as a trainer sees them: the mean of |y| token log-probs."""
    out = []
    for _ in range(n):
        length = rng.randint(1, 50)
        out.append(sum(-rng.expovariate(rng.uniform(0.5, 2.0)) for _ in range(length)) / length)
    return out


def tensors(chosen, rejected, dtype=torch.float64, requires_grad=False):
    c = torch.tensor(chosen, dtype=dtype, requires_grad=requires_grad)
    r = torch.tensor(rejected, dtype=dtype, requires_grad=requires_grad)
    return c, r


def assert_all_close(got, expected, rtol=1e-9, atol=1e-10, what="losses"):
    got = got.detach().tolist()
    assert len(got) == len(expected), "%s: %d values, expected %d" % (what, len(got), len(expected))
    for i, (g, e) in enumerate(zip(got, expected)):
        assert _isclose(g, e, rel_tol=rtol, abs_tol=atol), "%s[%d]: expected %r, got %r" % (what, i, e, g)


@pytest.mark.parametrize("beta,gamma_beta_ratio", CONFIGS)
def test_sigmoid_loss_is_equation_6_per_pair(beta, gamma_beta_ratio):
    rng = random.Random(int(beta * 100 + gamma_beta_ratio * 1000))
    chosen, rejected = average_logps(rng, 32), average_logps(rng, 32)
    losses, _, _ = make_trainer(beta, gamma_beta_ratio).simpo_loss(*tensors(chosen, rejected))
    assert_all_close(losses, [oracle_sigmoid(beta, gamma_beta_ratio, c, r) for c, r in zip(chosen, rejected)])


@pytest.mark.parametrize("beta,gamma_beta_ratio", CONFIGS)
def test_loss_is_log_two_when_the_reward_gap_equals_the_target_margin(beta, gamma_beta_ratio):
    rejected = [-0.5, -1.25, -2.0, -0.125]
    chosen = [r + gamma_beta_ratio for r in rejected]  # beta * (p_w - p_l) == gamma
    losses, _, _ = make_trainer(beta, gamma_beta_ratio).simpo_loss(*tensors(chosen, rejected))
    assert_all_close(losses, [math.log(2.0)] * 4, rtol=1e-9, atol=1e-9)


def test_rewards_are_beta_times_the_length_normalised_logps():
    rng = random.Random(5)
    chosen, rejected = average_logps(rng, 16), average_logps(rng, 16)
    _, chosen_rewards, rejected_rewards = make_trainer(2.5, 0.55).simpo_loss(*tensors(chosen, rejected))
    assert_all_close(chosen_rewards, [2.5 * c for c in chosen], what="chosen_rewards")
    assert_all_close(rejected_rewards, [2.5 * r for r in rejected], what="rejected_rewards")


def test_rewards_do_not_depend_on_the_margin_or_the_loss_type():
    rng = random.Random(6)
    chosen, rejected = average_logps(rng, 8), average_logps(rng, 8)
    a = make_trainer(10.0, 0.3, "sigmoid", 0.2).simpo_loss(*tensors(chosen, rejected))
    b = make_trainer(10.0, 0.9, "hinge", 0.0).simpo_loss(*tensors(chosen, rejected))
    assert_all_close(a[1], b[1].tolist(), what="chosen_rewards")
    assert_all_close(a[2], b[2].tolist(), what="rejected_rewards")


def test_rewards_are_detached_from_the_graph():
    rng = random.Random(7)
    chosen, rejected = tensors(average_logps(rng, 4), average_logps(rng, 4), requires_grad=True)
    losses, chosen_rewards, rejected_rewards = make_trainer().simpo_loss(chosen, rejected)
    assert losses.requires_grad
    assert not chosen_rewards.requires_grad and not rejected_rewards.requires_grad


def test_loss_gradient_with_respect_to_the_logps():
    beta, ratio = 2.5, 0.55
    rng = random.Random(8)
    values_c, values_r = average_logps(rng, 6), average_logps(rng, 6)
    chosen_grad, rejected_grad = gradients_of_the_losses(make_trainer(beta, ratio).settings, *tensors(values_c, values_r))
    # d/dz softplus(-z) = -sigmoid(-z), and z = beta * p_w - beta * p_l - gamma
    weights = [1.0 / (1.0 + math.exp(margin(beta, ratio, c, r))) for c, r in zip(values_c, values_r)]
    assert_all_close(chosen_grad, [-beta * w for w in weights], what="d loss / d chosen")
    assert_all_close(rejected_grad, [beta * w for w in weights], what="d loss / d rejected")


def test_large_reward_gaps_give_finite_exact_losses_in_float32():
    # beta = 10 (the upstream's Gemma 2 and Llama 3 v2 configs) and gaps of about 12 nats per
    # token: the argument of the sigmoid reaches -125, where sigmoid underflows in float32.
    beta, ratio = 10.0, 0.5
    chosen = [-12.5, -0.25, -13.0, -0.5]
    rejected = [-0.5, -12.25, -0.25, -12.5]
    losses, _, _ = make_trainer(beta, ratio).simpo_loss(*tensors(chosen, rejected, dtype=torch.float32))
    assert torch.isfinite(losses).all(), losses
    assert_all_close(losses, [oracle_sigmoid(beta, ratio, c, r) for c, r in zip(chosen, rejected)], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("label_smoothing", [0.1, 0.3, 0.5])
def test_label_smoothing_weights_the_reversed_preference(label_smoothing):
    rng = random.Random(int(label_smoothing * 10))
    chosen, rejected = average_logps(rng, 16), average_logps(rng, 16)
    losses, _, _ = make_trainer(2.0, 0.5, "sigmoid", label_smoothing).simpo_loss(*tensors(chosen, rejected))
    expected = [oracle_sigmoid(2.0, 0.5, c, r, label_smoothing) for c, r in zip(chosen, rejected)]
    assert_all_close(losses, expected)


@pytest.mark.parametrize("beta,gamma_beta_ratio", [(2.0, 0.5), (2.5, 0.1), (10.0, 0.3)])
def test_hinge_loss_per_pair(beta, gamma_beta_ratio):
    rng = random.Random(int(beta * 10 + gamma_beta_ratio * 100))
    chosen, rejected = average_logps(rng, 24), average_logps(rng, 24)
    chosen[0], rejected[0] = -0.5, -0.5 - gamma_beta_ratio - 1.0 / beta  # exactly at the hinge
    losses, _, _ = make_trainer(beta, gamma_beta_ratio, "hinge").simpo_loss(*tensors(chosen, rejected))
    assert_all_close(losses, [oracle_hinge(beta, gamma_beta_ratio, c, r) for c, r in zip(chosen, rejected)], atol=1e-9)


def test_hinge_loss_ignores_label_smoothing():
    rng = random.Random(9)
    chosen, rejected = average_logps(rng, 12), average_logps(rng, 12)
    plain, _, _ = make_trainer(2.5, 0.55, "hinge", 0.0).simpo_loss(*tensors(chosen, rejected))
    smoothed, _, _ = make_trainer(2.5, 0.55, "hinge", 0.25).simpo_loss(*tensors(chosen, rejected))
    assert_all_close(smoothed, plain.tolist())


@pytest.mark.parametrize("loss_type", ["ipo", "kto_pair", "Sigmoid", ""])
def test_unknown_loss_type_raises_value_error(loss_type):
    with pytest.raises(ValueError):
        make_trainer(loss_type=loss_type).simpo_loss(*tensors([-1.0, -0.5], [-1.5, -0.25]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("batch_size", [1, 3, 64])
def test_returns_one_value_per_pair_in_the_input_dtype(dtype, batch_size):
    rng = random.Random(batch_size)
    chosen, rejected = tensors(average_logps(rng, batch_size), average_logps(rng, batch_size), dtype=dtype)
    result = make_trainer().simpo_loss(chosen, rejected)
    assert isinstance(result, tuple) and len(result) == 3
    for t in result:
        assert isinstance(t, torch.Tensor)
        assert tuple(t.shape) == (batch_size,) and t.dtype == dtype, (tuple(t.shape), t.dtype)


def test_inputs_are_left_unchanged():
    rng = random.Random(10)
    chosen, rejected = tensors(average_logps(rng, 8), average_logps(rng, 8))
    after = inputs_after_the_call(make_trainer(2.0, 0.5, "sigmoid", 0.1).settings, chosen, rejected)
    assert torch.equal(after[0], chosen) and torch.equal(after[1], rejected)


def test_loss_of_the_trainers_own_length_normalised_logps():
    """From logits to loss as concatenated_forward does it: the loss receives averages, not sums."""
    g = torch.Generator().manual_seed(14734)
    pairs, seq_len, vocab, prompt = 3, 14, 11, 4
    logits = torch.randn(2 * pairs, seq_len, vocab, generator=g, dtype=torch.float64)
    labels = torch.randint(0, vocab, (2 * pairs, seq_len), generator=g)
    labels[:, :prompt] = -100  # the prompt is not scored
    ends = [14, 9, 6, 12, 7, 14]  # responses of different lengths, then padding
    for row, end in enumerate(ends):
        labels[row, end:] = -100
    got = loss_of_the_trainers_own_logps(make_trainer(2.0, 0.5).settings, logits, labels, pairs)
    losses, chosen_rewards = got["losses"], got["chosen_rewards"]

    def mean_token_logp(row):
        total, count = 0.0, 0
        for t in range(1, seq_len):  # token t is predicted from the logits at t - 1
            if int(labels[row, t]) == -100:
                continue
            scores = logits[row, t - 1].tolist()
            top = max(scores)
            log_norm = top + math.log(sum(math.exp(s - top) for s in scores))
            total += scores[int(labels[row, t])] - log_norm
            count += 1
        return total / count

    p = [mean_token_logp(row) for row in range(2 * pairs)]
    assert_all_close(losses, [oracle_sigmoid(2.0, 0.5, p[i], p[pairs + i]) for i in range(pairs)], rtol=1e-8, atol=1e-9)
    assert_all_close(chosen_rewards, [2.0 * p[i] for i in range(pairs)], rtol=1e-8, atol=1e-9, what="chosen_rewards")
