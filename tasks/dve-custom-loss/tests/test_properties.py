"""Property tests for CustomLoss.forward (Evaluator/visual_text_training.py), written from the paper.

The evaluator's pairwise contrastive objective compares, per example, the entailment-strength
score of (image, hypothesis, update) with that of (image, hypothesis, premise caption): a
strengthener (label +1) should score above the premise, a weakener (label -1) below it, and
the loss is the batch mean of the negative log-likelihood of that ordering under a logistic
model of the score difference. The oracle below computes it in float64 numpy from that
definition (softplus of the negated signed margin, averaged), independently of torch.

Inputs are what the upstream training step passes: scores of shape (B, 1) from the
regressor (or (B,) once squeezed) and float labels of +1/-1 of shape (B,).

The loss runs in the candidate process (lmr_bridge): the probes below build a CustomLoss
there, call it on the tensors this file chose and send back the result (or the gradients,
or the inputs as the call left them) as plain data. Every expected value is computed here.
"""
import math

import numpy as np
import torch
from lmr_bridge import probe


@probe
def losses_of(cases):
    """In the candidate: CustomLoss()(premise, update, labels) for each case, as returned."""
    from Evaluator.visual_text_training import CustomLoss

    return [CustomLoss()(premise, update, labels) for premise, update, labels in cases]


@probe
def score_gradients(premise, update, labels):
    """In the candidate: the gradients of the loss with respect to both score tensors."""
    from Evaluator.visual_text_training import CustomLoss

    premise.requires_grad_(True)
    update.requires_grad_(True)
    CustomLoss()(premise, update, labels).backward()
    return [premise.grad, update.grad]


@probe
def regressor_gradients(seed, labels):
    """In the candidate: a seeded nn.Linear(4, 1) scores two feature batches, the loss is
    backpropagated through it, and its parameters' gradients come back."""
    import torch
    from Evaluator.visual_text_training import CustomLoss

    torch.manual_seed(seed)
    regressor = torch.nn.Linear(4, 1)
    features_p, features_u = torch.randn(5, 4), torch.randn(5, 4)
    CustomLoss()(regressor(features_p), regressor(features_u), labels).backward()
    return {"weight": regressor.weight.grad, "bias": regressor.bias.grad}


@probe
def inputs_after_the_call(premise, update, labels):
    """In the candidate: the three inputs as the call left them."""
    from Evaluator.visual_text_training import CustomLoss

    CustomLoss()(premise, update, labels)
    return [premise, update, labels]


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


def value(out):
    assert isinstance(out, torch.Tensor), "expected a tensor, got %r" % (out,)
    return float(out.detach())


def loss_values(cases):
    return [value(out) for out in losses_of([list(c) for c in cases])]


def loss_value(premise, update, labels):
    return loss_values([(premise, update, labels)])[0]


def test_matches_oracle_in_float64():
    cases = [batch(n, seed, dtype=torch.float64) for n, seed in ((1, 0), (2, 1), (7, 2), (32, 3), (33, 4))]
    for (premise, update, labels), got in zip(cases, loss_values(cases)):
        want = oracle(numpy_of(premise), numpy_of(update), numpy_of(labels))
        assert math.isclose(got, want, rel_tol=1e-10, abs_tol=1e-12), (len(labels), got, want)


def test_matches_oracle_in_float32():
    cases = [batch(n, seed) for n, seed in ((3, 10), (16, 11), (64, 12))]
    for (premise, update, labels), got in zip(cases, loss_values(cases)):
        want = oracle(numpy_of(premise), numpy_of(update), numpy_of(labels))
        assert math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-6), (len(labels), got, want)


def test_scores_of_shape_b_match_scores_of_shape_b_by_1():
    premise, update, labels = batch(9, 20, dtype=torch.float64)
    column, flat = loss_values([(premise, update, labels), (premise.view(-1), update.view(-1), labels)])
    want = oracle(numpy_of(premise), numpy_of(update), numpy_of(labels))
    assert math.isclose(flat, want, rel_tol=1e-10, abs_tol=1e-12), (flat, want)
    assert math.isclose(column, want, rel_tol=1e-10, abs_tol=1e-12), (column, want)


def test_each_label_pairs_with_its_own_example():
    # (B, 1) scores and (B,) labels must pair element by element, not broadcast to (B, B)
    premise = torch.tensor([[0.0], [0.0]], dtype=torch.float64)
    update = torch.tensor([[3.0], [-3.0]], dtype=torch.float64)
    labels = torch.tensor([1.0, -1.0], dtype=torch.float64)
    got = loss_value(premise, update, labels)
    assert math.isclose(got, math.log1p(math.exp(-3.0)), rel_tol=1e-10, abs_tol=1e-12), got


def test_returns_a_scalar_tensor():
    out = losses_of([list(batch(5, 30))])[0]
    assert isinstance(out, torch.Tensor), type(out)
    assert out.dim() == 0, tuple(out.shape)


def test_dtype_follows_the_scores():
    dtypes = (torch.float32, torch.float64)
    outs = losses_of([list(batch(4, 31, dtype=dtype)) for dtype in dtypes])
    for dtype, out in zip(dtypes, outs):
        assert isinstance(out, torch.Tensor), type(out)
        assert out.dtype == dtype, (dtype, out.dtype)


def test_zero_margins_give_log_two():
    premise, _, labels = batch(6, 40, dtype=torch.float64)
    got = loss_value(premise, premise.clone(), labels)
    assert math.isclose(got, math.log(2.0), rel_tol=1e-12, abs_tol=1e-12), got


def test_strengthener_is_rewarded_for_scoring_above_the_premise():
    premise = torch.zeros(1, 1, dtype=torch.float64)
    up = torch.full((1, 1), 1.5, dtype=torch.float64)
    down = torch.full((1, 1), -1.5, dtype=torch.float64)
    plus = torch.ones(1, dtype=torch.float64)
    rewarded, penalised = loss_values([(premise, up, plus), (premise, down, plus)])
    assert rewarded < math.log(2.0) < penalised


def test_weakener_is_rewarded_for_scoring_below_the_premise():
    premise = torch.zeros(1, 1, dtype=torch.float64)
    up = torch.full((1, 1), 1.5, dtype=torch.float64)
    down = torch.full((1, 1), -1.5, dtype=torch.float64)
    minus = -torch.ones(1, dtype=torch.float64)
    rewarded, penalised = loss_values([(premise, down, minus), (premise, up, minus)])
    assert rewarded < math.log(2.0) < penalised


def test_loss_decreases_as_the_signed_margin_grows():
    premise = torch.zeros(1, 1, dtype=torch.float64)
    labels = torch.ones(1, dtype=torch.float64)
    values = loss_values([(premise, torch.full((1, 1), m, dtype=torch.float64), labels) for m in (-4.0, -1.0, 0.0, 0.5, 2.0, 6.0)])
    assert all(a > b for a, b in zip(values, values[1:])), values
    assert all(v > 0.0 for v in values), values


def test_depends_only_on_the_score_difference():
    premise, update, labels = batch(8, 50, dtype=torch.float64)
    base, shifted = loss_values([(premise, update, labels), (premise + 3.25, update + 3.25, labels)])
    assert math.isclose(base, shifted, rel_tol=1e-10, abs_tol=1e-12), (base, shifted)


def test_swapping_the_two_scores_and_the_labels_leaves_the_loss_unchanged():
    premise, update, labels = batch(8, 60, dtype=torch.float64)
    base, swapped = loss_values([(premise, update, labels), (update, premise, -labels)])
    assert math.isclose(base, swapped, rel_tol=1e-10, abs_tol=1e-12), (base, swapped)


def test_is_the_mean_over_the_batch():
    a = batch(5, 70, dtype=torch.float64)
    b = batch(5, 71, dtype=torch.float64)
    joined, loss_a, loss_b, repeated = loss_values([
        (torch.cat([a[0], b[0]]), torch.cat([a[1], b[1]]), torch.cat([a[2], b[2]])),
        a,
        b,
        (a[0].repeat(3, 1), a[1].repeat(3, 1), a[2].repeat(3)),
    ])
    halves = 0.5 * (loss_a + loss_b)
    assert math.isclose(joined, halves, rel_tol=1e-10, abs_tol=1e-12), (joined, halves)
    assert math.isclose(repeated, loss_a, rel_tol=1e-10, abs_tol=1e-12), repeated


def test_large_margins_stay_accurate_in_float32():
    premise = torch.tensor([[-12.0], [10.0], [0.0], [3.0]])
    update = torch.tensor([[13.0], [-15.0], [25.0], [-22.0]])
    labels = torch.tensor([1.0, 1.0, -1.0, 1.0])
    got = loss_value(premise, update, labels)
    want = oracle(numpy_of(premise), numpy_of(update), numpy_of(labels))
    assert math.isfinite(got)
    assert math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-6), (got, want)


def test_gradients_match_the_oracle():
    for n, seed in ((1, 80), (6, 81), (20, 82)):
        premise, update, labels = batch(n, seed, dtype=torch.float64)
        grad_p, grad_u = score_gradients(premise, update, labels)
        want_p, want_u = oracle_grads(numpy_of(premise), numpy_of(update), numpy_of(labels))
        assert isinstance(grad_p, torch.Tensor) and isinstance(grad_u, torch.Tensor), (grad_p, grad_u)
        assert tuple(grad_p.shape) == (n, 1) and tuple(grad_u.shape) == (n, 1)
        assert np.allclose(numpy_of(grad_p).reshape(-1), want_p, rtol=1e-9, atol=1e-12), (numpy_of(grad_p), want_p)
        assert np.allclose(numpy_of(grad_u).reshape(-1), want_u, rtol=1e-9, atol=1e-12), (numpy_of(grad_u), want_u)


def test_gradients_flow_through_a_regressor():
    labels = torch.tensor([1.0, -1.0, -1.0, 1.0, 1.0])
    grads = regressor_gradients(90, labels)
    assert isinstance(grads["weight"], torch.Tensor) and isinstance(grads["bias"], torch.Tensor), grads
    # the bias enters both scores equally, so it cancels in every difference
    assert abs(float(grads["bias"])) < 1e-6, float(grads["bias"])
    assert float(grads["weight"].abs().sum()) > 1e-4


def test_inputs_are_left_unchanged():
    premise, update, labels = batch(6, 100)
    before = [numpy_of(t) for t in (premise, update, labels)]
    shapes = [tuple(t.shape) for t in (premise, update, labels)]
    after = inputs_after_the_call(premise, update, labels)
    assert [tuple(t.shape) for t in after] == shapes
    assert all(np.array_equal(a, numpy_of(b)) for a, b in zip(before, after))
