"""Property tests for focal_loss.forward (model.py), written from the definition of the focal loss.

For an example with logits z and gold class y, p = softmax(z)[y], and its loss is
alpha[y] * (1 - p) ** gamma * (-log p); forward returns the mean of these over all examples
(size_average=True) or their sum (size_average=False). alpha is the per-class weight vector
the constructor builds: from a scalar a, weight 1 - a for class 0 and a for every other
class; from a list, the list itself. The oracle below computes this with plain Python math
in float64 from a stable log-softmax. The loss is always built with its own constructor,
as LongformerCausalModel builds it, on 2-D logits (n_pairs, classes) with 1-D labels, the
only shapes that model passes.

The loss runs in the candidate process (lmr_bridge): the probes below build focal_loss
there with the options given, call it on the tensors this file chose, and send back the
result (or gradients, or the state after the call) as plain data. Every expected value is
computed here.
"""
import math

import torch
import torch.nn.functional as F
from lmr_bridge import probe


@probe
def losses_of(cases):
    """In the candidate: focal_loss(**options)(preds, labels) for each (options, preds, labels)."""
    from model import focal_loss

    return [focal_loss(**options)(preds, labels) for options, preds, labels in cases]


@probe
def logit_gradient(options, preds, labels):
    """In the candidate: the gradient of the loss with respect to the logits."""
    from model import focal_loss

    preds.requires_grad_(True)
    focal_loss(**options)(preds, labels).backward()
    return preds.grad


@probe
def after_the_call(options, preds, labels):
    """In the candidate: the inputs and the loss's state as the call left them."""
    from model import focal_loss

    loss = focal_loss(**options)
    loss(preds, labels)
    return {"preds": preds, "labels": labels, "alpha": loss.alpha, "gamma": loss.gamma, "size_average": loss.size_average}


def close(a, b, rel=1e-5, abs_=1e-7):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def weights(alpha, num_classes):
    if isinstance(alpha, list):
        return [float(a) for a in alpha]
    return [1.0 - alpha] + [float(alpha)] * (num_classes - 1)


def per_example(rows, labels, alpha, gamma, num_classes):
    w = weights(alpha, num_classes)
    out = []
    for z, y in zip(rows, labels):
        top = max(z)
        log_p = z[y] - top - math.log(sum(math.exp(v - top) for v in z))
        p = math.exp(log_p)
        out.append(-w[y] * (1.0 - p) ** gamma * log_p)
    return out


def oracle(preds, labels, alpha=0.25, gamma=2, num_classes=3, size_average=True):
    rows = preds.reshape(-1, preds.shape[-1]).double().tolist()
    losses = per_example(rows, labels.reshape(-1).tolist(), alpha, gamma, num_classes)
    return sum(losses) / len(losses) if size_average else sum(losses)


def batch(n, classes, seed, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    return scale * torch.randn(n, classes, generator=g), torch.randint(0, classes, (n,), generator=g)


def value(loss):
    assert isinstance(loss, torch.Tensor), type(loss)
    return loss.item()


def loss_values(cases):
    """[(options, preds, labels), ...] -> the loss of each, as floats (one round trip)."""
    return [value(out) for out in losses_of([[options, preds, labels] for options, preds, labels in cases])]


def loss_value(options, preds, labels):
    return loss_values([(options, preds, labels)])[0]


def test_train_configuration_matches_the_focal_loss():
    preds, labels = batch(30, 2, 1)
    got = loss_value({"alpha": 0.75, "gamma": 2, "num_classes": 2}, preds, labels)
    assert close(got, oracle(preds, labels, 0.75, 2, 2)), got


def test_scalar_alpha_weights_class_zero_by_one_minus_alpha():
    preds = torch.tensor([[0.3, -0.4]])
    options = {"alpha": 0.75, "gamma": 0, "num_classes": 2}
    ce_zero = F.cross_entropy(preds.double(), torch.tensor([0])).item()
    ce_one = F.cross_entropy(preds.double(), torch.tensor([1])).item()
    got_zero, got_one = loss_values([(options, preds, torch.tensor([0])), (options, preds, torch.tensor([1]))])
    assert close(got_zero, 0.25 * ce_zero)
    assert close(got_one, 0.75 * ce_one)


def test_scalar_alpha_gives_every_other_class_alpha():
    preds, labels = batch(24, 4, 2)
    got = loss_value({"alpha": 0.3, "gamma": 1, "num_classes": 4}, preds, labels)
    assert close(got, oracle(preds, labels, 0.3, 1, 4)), got


def test_list_alpha_weights_each_class_by_its_entry():
    preds, labels = batch(24, 3, 3)
    alpha = [0.2, 0.5, 1.3]
    got = loss_value({"alpha": alpha, "gamma": 2, "num_classes": 3}, preds, labels)
    assert close(got, oracle(preds, labels, alpha, 2, 3)), got


def test_gamma_zero_is_class_weighted_cross_entropy():
    preds, labels = batch(20, 3, 4)
    alpha = [0.2, 0.3, 0.5]
    got = loss_value({"alpha": alpha, "gamma": 0, "num_classes": 3}, preds, labels)
    ce = F.cross_entropy(preds.double(), labels, reduction="none")
    expected = (torch.tensor(alpha, dtype=torch.float64)[labels] * ce).mean().item()
    assert close(got, expected), (got, expected)


def test_mean_is_over_examples_not_over_weights():
    preds, labels = batch(20, 2, 5)
    got = loss_value({"alpha": 0.75, "gamma": 0, "num_classes": 2}, preds, labels)
    plain_mean = oracle(preds, labels, 0.75, 0, 2)
    weight_normalised = F.cross_entropy(preds.double(), labels, weight=torch.tensor([0.25, 0.75], dtype=torch.float64)).item()
    assert close(got, plain_mean), (got, plain_mean)
    assert not close(got, weight_normalised, rel=1e-3), "divided by the sum of the weights, not by the number of examples"


def test_size_average_false_sums_the_examples():
    preds, labels = batch(17, 3, 6)
    got = loss_value({"alpha": [0.4, 0.4, 0.2], "gamma": 2, "num_classes": 3, "size_average": False}, preds, labels)
    assert close(got, oracle(preds, labels, [0.4, 0.4, 0.2], 2, 3, size_average=False)), got


def test_sum_is_number_of_examples_times_mean():
    preds, labels = batch(13, 2, 7)
    mean, total = loss_values([
        ({"alpha": 0.75, "gamma": 2, "num_classes": 2}, preds, labels),
        ({"alpha": 0.75, "gamma": 2, "num_classes": 2, "size_average": False}, preds, labels),
    ])
    assert close(total, 13 * mean), (total, mean)


def test_larger_gamma_down_weights_every_example():
    preds, labels = batch(16, 3, 8)
    values = loss_values([({"alpha": 0.25, "gamma": gamma, "num_classes": 3}, preds, labels) for gamma in (0, 0.5, 1, 2, 4)])
    assert all(a > b for a, b in zip(values, values[1:])), values


def test_fractional_gamma():
    preds, labels = batch(16, 2, 9)
    got = loss_value({"alpha": 0.6, "gamma": 1.5, "num_classes": 2}, preds, labels)
    assert close(got, oracle(preds, labels, 0.6, 1.5, 2)), got


def test_returns_a_zero_dimensional_float32_tensor():
    preds, labels = batch(8, 2, 11)
    loss = losses_of([[{"alpha": 0.75, "gamma": 2, "num_classes": 2}, preds, labels]])[0]
    assert isinstance(loss, torch.Tensor)
    assert loss.dim() == 0, tuple(loss.shape)
    assert loss.dtype == torch.float32


def test_gradient_matches_the_focal_loss():
    preds, labels = batch(10, 3, 12)
    alpha, gamma = [0.3, 0.3, 0.4], 2
    grad = logit_gradient({"alpha": alpha, "gamma": gamma, "num_classes": 3}, preds.double().clone(), labels)

    y = preds.double().clone().requires_grad_(True)
    log_p = F.log_softmax(y, dim=-1).gather(1, labels.view(-1, 1)).view(-1)
    w = torch.tensor(alpha, dtype=torch.float64)[labels]
    (-(w * (1 - log_p.exp()) ** gamma * log_p)).mean().backward()

    assert isinstance(grad, torch.Tensor), grad
    assert tuple(grad.shape) == tuple(y.grad.shape), tuple(grad.shape)
    for a, b in zip(grad.flatten().tolist(), y.grad.flatten().tolist()):
        assert math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-7), (a, b)


def test_large_logit_gaps_stay_finite():
    preds = torch.tensor([[150.0, -150.0], [-150.0, 150.0], [0.5, -0.5]])
    labels = torch.tensor([1, 1, 0])
    got = loss_value({"alpha": 0.75, "gamma": 2, "num_classes": 2}, preds, labels)
    assert math.isfinite(got), got
    assert close(got, oracle(preds, labels, 0.75, 2, 2), rel=1e-5), got


def test_adding_a_constant_to_the_logits_changes_nothing():
    preds, labels = batch(12, 3, 13)
    options = {"alpha": [0.5, 0.3, 0.2], "gamma": 2, "num_classes": 3}
    plain, shifted = loss_values([(options, preds, labels), (options, preds + 7.5, labels)])
    assert close(plain, shifted)


def test_confident_correct_predictions_cost_almost_nothing():
    labels = torch.tensor([0, 1, 1, 0])
    preds = 12.0 * (F.one_hot(labels, 2).float() * 2 - 1)
    got = loss_value({"alpha": 0.75, "gamma": 2, "num_classes": 2}, preds, labels)
    assert 0.0 <= got < 1e-12, got


def test_inputs_and_weights_are_left_unchanged():
    preds, labels = batch(9, 3, 14)
    got = after_the_call({"alpha": [0.2, 0.3, 0.5], "gamma": 2, "num_classes": 3}, preds.clone(), labels.clone())
    assert torch.equal(got["preds"], preds) and torch.equal(got["labels"], labels)
    # the state the constructor builds from these options (alpha as a float32 tensor)
    assert torch.equal(got["alpha"], torch.tensor([0.2, 0.3, 0.5], dtype=torch.float32))
    assert got["gamma"] == 2 and got["size_average"] is True
