"""Property tests for CustomLoss.forward (Evaluator/visual_text_training.py), written from the paper.

The evaluator's pairwise contrastive objective compares, per example, the entailment-strength
score of (image, hypothesis, update) with that of (image, hypothesis, premise caption): a
strengthener (label +1) should score above the premise, a weakener (label -1) below it, and
the loss is the batch mean of the negative log-likelihood of that ordering under a logistic
model of the score difference. The oracle below computes it in float64 numpy from that
definition (softplus of the negated signed margin, averaged), independently of torch.

Inputs are what the upstream training step passes: scores of shape (B, 1) from the
regressor (or (B,) once squeezed) and float labels of +1/-1 of shape (B,).
"""
import math

import numpy as np
import torch

_allclose = np.allclose
_isclose = math.isclose

from Evaluator.visual_text_training import CustomLoss  # noqa: E402


def oracle(premise, update, labels):
    p = np.asarray(premise, dtype=np.float64).reshape(-1)
    u = np.asarray(update, dtype=np.float64).reshape(-1)
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    z = -y * (u - p)
    return float(np.mean(np.logaddexp(0.0, z)))


def oracle_grads(premise, update, labels):
    p = np.asarray(premise, dtype=np.float64).reshape(-1)
    u = np.asarray(update, dtype=np.float64).reshape(-1)
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    m = y * (u - p)
    d_update = -y / (1.0 + np.exp(m)) / len(y)
    return -d_update, d_update


def numpy_of(t):
    return np.array(t.detach().cpu().numpy(), dtype=np.float64, copy=True)


def batch(n, seed, dtype=torch.float32, scale=2.0, column=True):
    g = torch.Generator().manual_seed(seed)
    shape = (n, 1) if column else (n,)
    premise = torch.randn(shape, generator=g, dtype=dtype) * scale
    update = torch.randn(shape, generator=g, dtype=dtype) * scale
    labels = (torch.randint(0, 2, (n,), generator=g) * 2 - 1).to(dtype)
    return premise, update, labels


def loss_value(premise, update, labels):
    out = CustomLoss()(premise, update, labels)
    return float(out.detach())


def test_matches_oracle_in_float64():
    for n, seed in ((1, 0), (2, 1), (7, 2), (32, 3), (33, 4)):
        premise, update, labels = batch(n, seed, dtype=torch.float64)
        got = loss_value(premise, update, labels)
        want = oracle(numpy_of(premise), numpy_of(update), numpy_of(labels))
        assert _isclose(got, want, rel_tol=1e-10, abs_tol=1e-12), (n, got, want)


def test_matches_oracle_in_float32():
    for n, seed in ((3, 10), (16, 11), (64, 12)):
        premise, update, labels = batch(n, seed)
        got = loss_value(premise, update, labels)
        want = oracle(numpy_of(premise), numpy_of(update), numpy_of(labels))
        assert _isclose(got, want, rel_tol=1e-5, abs_tol=1e-6), (n, got, want)


def test_scores_of_shape_b_match_scores_of_shape_b_by_1():
    premise, update, labels = batch(9, 20, dtype=torch.float64)
    column = loss_value(premise, update, labels)
    flat = loss_value(premise.view(-1), update.view(-1), labels)
    want = oracle(numpy_of(premise), numpy_of(update), numpy_of(labels))
    assert _isclose(flat, want, rel_tol=1e-10, abs_tol=1e-12), (flat, want)
    assert _isclose(column, want, rel_tol=1e-10, abs_tol=1e-12), (column, want)


def test_each_label_pairs_with_its_own_example():
    # (B, 1) scores and (B,) labels must pair element by element, not broadcast to (B, B)
    premise = torch.tensor([[0.0], [0.0]], dtype=torch.float64)
    update = torch.tensor([[3.0], [-3.0]], dtype=torch.float64)
    labels = torch.tensor([1.0, -1.0], dtype=torch.float64)
    got = loss_value(premise, update, labels)
    assert _isclose(got, math.log1p(math.exp(-3.0)), rel_tol=1e-10, abs_tol=1e-12), got


def test_returns_a_scalar_tensor():
    premise, update, labels = batch(5, 30)
    out = CustomLoss()(premise, update, labels)
    assert isinstance(out, torch.Tensor)
    assert out.dim() == 0, tuple(out.shape)


def test_dtype_follows_the_scores():
    for dtype in (torch.float32, torch.float64):
        premise, update, labels = batch(4, 31, dtype=dtype)
        out = CustomLoss()(premise, update, labels)
        assert out.dtype == dtype, (dtype, out.dtype)


def test_zero_margins_give_log_two():
    premise, _, labels = batch(6, 40, dtype=torch.float64)
    got = loss_value(premise, premise.clone(), labels)
    assert _isclose(got, math.log(2.0), rel_tol=1e-12, abs_tol=1e-12), got


def test_strengthener_is_rewarded_for_scoring_above_the_premise():
    premise = torch.zeros(1, 1, dtype=torch.float64)
    up = torch.full((1, 1), 1.5, dtype=torch.float64)
    down = torch.full((1, 1), -1.5, dtype=torch.float64)
    plus = torch.ones(1, dtype=torch.float64)
    assert loss_value(premise, up, plus) < math.log(2.0) < loss_value(premise, down, plus)


def test_weakener_is_rewarded_for_scoring_below_the_premise():
    premise = torch.zeros(1, 1, dtype=torch.float64)
    up = torch.full((1, 1), 1.5, dtype=torch.float64)
    down = torch.full((1, 1), -1.5, dtype=torch.float64)
    minus = -torch.ones(1, dtype=torch.float64)
    assert loss_value(premise, down, minus) < math.log(2.0) < loss_value(premise, up, minus)


def test_loss_decreases_as_the_signed_margin_grows():
    premise = torch.zeros(1, 1, dtype=torch.float64)
    labels = torch.ones(1, dtype=torch.float64)
    values = [loss_value(premise, torch.full((1, 1), m, dtype=torch.float64), labels) for m in (-4.0, -1.0, 0.0, 0.5, 2.0, 6.0)]
    assert all(a > b for a, b in zip(values, values[1:])), values
    assert all(v > 0.0 for v in values), values


def test_depends_only_on_the_score_difference():
    premise, update, labels = batch(8, 50, dtype=torch.float64)
    base = loss_value(premise, update, labels)
    shifted = loss_value(premise + 3.25, update + 3.25, labels)
    assert _isclose(base, shifted, rel_tol=1e-10, abs_tol=1e-12), (base, shifted)


def test_swapping_the_two_scores_and_the_labels_leaves_the_loss_unchanged():
    premise, update, labels = batch(8, 60, dtype=torch.float64)
    base = loss_value(premise, update, labels)
    swapped = loss_value(update, premise, -labels)
    assert _isclose(base, swapped, rel_tol=1e-10, abs_tol=1e-12), (base, swapped)


def test_is_the_mean_over_the_batch():
    a = batch(5, 70, dtype=torch.float64)
    b = batch(5, 71, dtype=torch.float64)
    joined = loss_value(torch.cat([a[0], b[0]]), torch.cat([a[1], b[1]]), torch.cat([a[2], b[2]]))
    halves = 0.5 * (loss_value(*a) + loss_value(*b))
    assert _isclose(joined, halves, rel_tol=1e-10, abs_tol=1e-12), (joined, halves)
    repeated = loss_value(a[0].repeat(3, 1), a[1].repeat(3, 1), a[2].repeat(3))
    assert _isclose(repeated, loss_value(*a), rel_tol=1e-10, abs_tol=1e-12), repeated


def test_large_margins_stay_accurate_in_float32():
    premise = torch.tensor([[-12.0], [10.0], [0.0], [3.0]])
    update = torch.tensor([[13.0], [-15.0], [25.0], [-22.0]])
    labels = torch.tensor([1.0, 1.0, -1.0, 1.0])
    got = loss_value(premise, update, labels)
    want = oracle(numpy_of(premise), numpy_of(update), numpy_of(labels))
    assert math.isfinite(got)
    assert _isclose(got, want, rel_tol=1e-5, abs_tol=1e-6), (got, want)


def test_gradients_match_the_oracle():
    for n, seed in ((1, 80), (6, 81), (20, 82)):
        premise, update, labels = batch(n, seed, dtype=torch.float64)
        premise.requires_grad_(True)
        update.requires_grad_(True)
        CustomLoss()(premise, update, labels).backward()
        want_p, want_u = oracle_grads(numpy_of(premise), numpy_of(update), numpy_of(labels))
        assert tuple(premise.grad.shape) == (n, 1) and tuple(update.grad.shape) == (n, 1)
        assert _allclose(numpy_of(premise.grad).reshape(-1), want_p, rtol=1e-9, atol=1e-12), (numpy_of(premise.grad), want_p)
        assert _allclose(numpy_of(update.grad).reshape(-1), want_u, rtol=1e-9, atol=1e-12), (numpy_of(update.grad), want_u)


def test_gradients_flow_through_a_regressor():
    torch.manual_seed(90)
    regressor = torch.nn.Linear(4, 1)
    features_p, features_u = torch.randn(5, 4), torch.randn(5, 4)
    labels = torch.tensor([1.0, -1.0, -1.0, 1.0, 1.0])
    CustomLoss()(regressor(features_p), regressor(features_u), labels).backward()
    assert regressor.weight.grad is not None and regressor.bias.grad is not None
    # the bias enters both scores equally, so it cancels in every difference
    assert abs(float(regressor.bias.grad)) < 1e-6, float(regressor.bias.grad)
    assert float(regressor.weight.grad.abs().sum()) > 1e-4


def test_inputs_are_left_unchanged():
    premise, update, labels = batch(6, 100)
    before = [numpy_of(t) for t in (premise, update, labels)]
    shapes = [tuple(t.shape) for t in (premise, update, labels)]
    CustomLoss()(premise, update, labels)
    after = [numpy_of(t) for t in (premise, update, labels)]
    assert [tuple(t.shape) for t in (premise, update, labels)] == shapes
    assert all(np.array_equal(a, b) for a, b in zip(before, after))
