"""Property tests for Lion.step (lion/lion_pytorch.py), written from the paper.

Every gradient here comes from a backward pass, as in training: a linear loss
(coefficients . w) gives the gradient `coefficients` exactly, a small network gives
realistic ones. The oracle below is Algorithm 2 of the paper in float64 numpy, written from
the paper's definition: direction = sign(beta1 * m + (1 - beta1) * g),
w <- w - lr * (direction + lambda * w), m <- beta2 * m + (1 - beta2) * g.
"""
import numpy as np
import torch
from torch import nn

_allclose = np.allclose
_array_equal = np.array_equal

from lion.lion_pytorch import Lion  # noqa: E402


def values(t):
    return np.array(t.detach().cpu().numpy(), dtype=np.float64, copy=True)


def oracle_step(w, m, g, lr, betas, wd):
    beta1, beta2 = betas
    direction = np.sign(beta1 * m + (1.0 - beta1) * g)
    return w - lr * (direction + wd * w), beta2 * m + (1.0 - beta2) * g


def linear_backward(params, coefficients):
    """Sets each parameter's .grad to its coefficient tensor through a backward pass."""
    loss = sum((p * c).sum() for p, c in zip(params, coefficients))
    loss.backward()
    return loss


def parameter(values_, dtype=torch.float32):
    return nn.Parameter(torch.tensor(values_, dtype=dtype))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 3)
        self.fc1 = nn.Linear(3, 5)
        self.fc2 = nn.Linear(5, 2)

    def forward(self, tokens):
        return self.fc2(torch.tanh(self.fc1(self.embed(tokens).mean(dim=1))))


def test_training_matches_an_oracle_of_algorithm_2():
    torch.manual_seed(0)
    net = Net()
    groups = [
        {"params": [net.fc1.weight, net.fc2.weight], "weight_decay": 0.5, "lr": 0.02},
        {"params": [net.embed.weight, net.fc1.bias, net.fc2.bias]},
    ]
    opt = Lion(groups, lr=0.005, betas=(0.8, 0.97), weight_decay=0.0)
    expected = {id(p): (values(p), np.zeros(tuple(p.shape))) for g in opt.param_groups for p in g["params"]}
    for _ in range(6):
        tokens, labels = torch.randint(0, 7, (4, 3)), torch.randint(0, 2, (4,))
        opt.zero_grad()
        nn.functional.cross_entropy(net(tokens), labels).backward()
        grads = {id(p): values(p.grad) for g in opt.param_groups for p in g["params"]}
        opt.step()
        for group in opt.param_groups:
            for p in group["params"]:
                w, m = expected[id(p)]
                w, m = oracle_step(w, m, grads[id(p)], group["lr"], group["betas"], group["weight_decay"])
                expected[id(p)] = (w, m)
                assert _allclose(values(p), w, rtol=1e-5, atol=1e-6)
                assert _allclose(values(opt.state[p]["exp_avg"]), m, rtol=1e-5, atol=1e-7)


def test_every_coordinate_moves_by_exactly_the_learning_rate_without_weight_decay():
    torch.manual_seed(1)
    w = nn.Parameter(torch.randn(4, 6))
    before = values(w)
    opt = Lion([w], lr=0.03)
    linear_backward([w], [torch.randn(4, 6)])
    opt.step()
    assert _allclose(np.abs(values(w) - before), 0.03, rtol=1e-4, atol=1e-6)


def test_a_zero_direction_moves_only_by_the_weight_decay():
    w = parameter([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    opt = Lion([w], lr=0.1, weight_decay=0.5)
    # first step: zero momentum; the second row has a zero gradient (an unused embedding row)
    linear_backward([w], [torch.tensor([[1.0, -2.0, 0.5], [0.0, 0.0, 0.0]])])
    opt.step()
    assert _allclose(values(w)[1], np.array([1.5, 0.25, -0.75]) * (1 - 0.1 * 0.5), rtol=1e-6, atol=1e-7)


def test_weight_decay_does_not_enter_the_direction_or_the_momentum():
    # a large positive weight with a small negative gradient: coupled L2 (g + lambda * w)
    # would flip the direction; decoupled weight decay does not
    w = parameter([3.0, 5.0])
    opt = Lion([w], lr=0.01, betas=(0.9, 0.99), weight_decay=1.0)
    linear_backward([w], [torch.tensor([-0.001, -0.002])])
    opt.step()
    assert _allclose(values(w), np.array([3.0, 5.0]) * (1 - 0.01) + 0.01, rtol=1e-6, atol=1e-7)
    assert _allclose(values(opt.state[w]["exp_avg"]), np.array([-0.001, -0.002]) * 0.01, rtol=1e-5, atol=1e-10)


def test_weight_decay_uses_the_weights_before_the_step():
    # decaying the already-updated weights would differ by lr * lr * lambda = 0.02
    w = parameter([1.0, -1.0, 0.5])
    opt = Lion([w], lr=0.1, weight_decay=2.0)
    linear_backward([w], [torch.tensor([1.0, 1.0, -1.0])])
    opt.step()
    assert _allclose(values(w), np.array([1.0, -1.0, 0.5]) * (1 - 0.2) - 0.1 * np.array([1.0, 1.0, -1.0]), rtol=1e-6, atol=1e-7)


def test_direction_interpolates_the_old_momentum_with_beta1():
    w = nn.Parameter(torch.zeros(6))
    opt = Lion([w], lr=0.01, betas=(0.9, 0.99))
    linear_backward([w], [torch.ones(6)])
    opt.step()  # momentum is now 0.01 everywhere
    after_first = values(w)
    w.grad = None
    a = torch.tensor([0.02, 0.05, 0.08, 0.1, 0.15, 0.3])
    linear_backward([w], [-a])
    opt.step()
    # direction = sign(0.9 * 0.01 - 0.1 * a): positive while a < 0.09, negative above
    expected_direction = np.sign(0.9 * 0.01 - 0.1 * a.numpy().astype(np.float64))
    assert _array_equal(np.sign(after_first - values(w)), expected_direction)


def test_momentum_is_an_exponential_average_with_beta2():
    w = nn.Parameter(torch.zeros(3))
    opt = Lion([w], lr=0.001, betas=(0.9, 0.8))
    g = torch.tensor([1.0, -2.0, 0.5])
    for _ in range(3):
        w.grad = None
        linear_backward([w], [g])
        opt.step()
    assert _allclose(values(opt.state[w]["exp_avg"]), (1 - 0.8 ** 3) * g.numpy(), rtol=1e-5, atol=1e-7)


def test_the_state_holds_only_the_momentum():
    w = nn.Parameter(torch.randn(2, 3))
    opt = Lion([w], lr=0.01)
    linear_backward([w], [torch.randn(2, 3)])
    opt.step()
    state = opt.state[w]
    assert set(state) == {"exp_avg"}
    assert tuple(state["exp_avg"].shape) == (2, 3) and state["exp_avg"].dtype == torch.float32


def test_parameters_without_gradient_are_untouched_and_get_no_state():
    used, idle = parameter([1.0, 2.0]), parameter([3.0, -4.0])
    opt = Lion([used, idle], lr=0.1, weight_decay=0.3)
    linear_backward([used], [torch.tensor([1.0, -1.0])])
    assert idle.grad is None
    opt.step()
    assert _array_equal(values(idle), np.array([3.0, -4.0]))
    assert idle not in opt.state
    assert used in opt.state


def test_a_zero_gradient_is_not_skipped():
    w = parameter([1.0, 1.0])
    opt = Lion([w], lr=0.1, betas=(0.9, 0.99))
    linear_backward([w], [torch.tensor([2.0, -2.0])])
    opt.step()
    opt.zero_grad(set_to_none=False)
    assert w.grad is not None
    before = values(w)
    opt.step()
    # the direction is the sign of 0.9 * momentum: the same as the first gradient's
    assert _allclose(values(w), before - 0.1 * np.array([1.0, -1.0]), rtol=1e-6, atol=1e-7)


def test_step_returns_what_the_closure_returns():
    torch.manual_seed(2)
    net = Net()
    opt = Lion(net.parameters(), lr=0.01)
    tokens, labels = torch.randint(0, 10, (3, 4)), torch.randint(0, 2, (3,))
    returned = []

    def closure():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(tokens), labels)
        loss.backward()
        returned.append(loss)
        return loss

    result = opt.step(closure)
    assert result is returned[0]


def test_the_closure_runs_once_with_gradients_enabled():
    w = nn.Parameter(torch.ones(3))
    opt = Lion([w], lr=0.01)
    seen = []

    def closure():
        seen.append(torch.is_grad_enabled())
        opt.zero_grad()
        loss = (w * torch.tensor([1.0, -1.0, 2.0])).sum()
        loss.backward()
        return loss

    opt.step(closure)
    assert seen == [True]


def test_the_update_uses_the_gradients_the_closure_leaves():
    torch.manual_seed(3)
    a, b = Net(), Net()
    b.load_state_dict(a.state_dict())
    opt_a, opt_b = Lion(a.parameters(), lr=0.01, weight_decay=0.1), Lion(b.parameters(), lr=0.01, weight_decay=0.1)
    tokens, labels = torch.randint(0, 10, (5, 3)), torch.randint(0, 2, (5,))
    # a stale gradient in a: the closure replaces it before the update
    nn.functional.cross_entropy(a(tokens.flip(0)), labels).backward()

    def closure():
        opt_a.zero_grad()
        loss = nn.functional.cross_entropy(a(tokens), labels)
        loss.backward()
        return loss

    opt_a.step(closure)
    opt_b.zero_grad()
    nn.functional.cross_entropy(b(tokens), labels).backward()
    opt_b.step()
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert _allclose(values(pa), values(pb), rtol=0, atol=1e-7)


def test_step_without_closure_returns_none():
    w = nn.Parameter(torch.ones(2))
    opt = Lion([w], lr=0.01)
    linear_backward([w], [torch.tensor([1.0, 2.0])])
    assert opt.step() is None


def stepped_net(seed):
    torch.manual_seed(seed)
    net = Net()
    opt = Lion(net.parameters(), lr=0.01, weight_decay=0.1)
    nn.functional.cross_entropy(net(torch.randint(0, 10, (4, 3))), torch.randint(0, 2, (4,))).backward()
    return opt, [p for g in opt.param_groups for p in g["params"]]


def test_parameters_are_changed_in_place():
    opt, params = stepped_net(4)
    pointers = [p.data_ptr() for p in params]
    before = [values(p) for p in params]
    opt.step()
    after = [p for g in opt.param_groups for p in g["params"]]
    assert len(params) == len(after) and all(x is y for x, y in zip(params, after))
    assert [p.data_ptr() for p in params] == pointers
    assert not all(_array_equal(values(p), b) for p, b in zip(params, before))
    assert all(isinstance(p, nn.Parameter) and p.requires_grad and p.grad_fn is None for p in params)


def test_gradients_are_left_unchanged():
    opt, params = stepped_net(6)
    grads = [values(p.grad) for p in params]
    opt.step()
    assert all(_array_equal(values(p.grad), g) for p, g in zip(params, grads))


def test_float64_parameters_stay_float64_and_match_the_oracle():
    w = nn.Parameter(torch.tensor([[0.3, -0.7], [1.1, 0.05]], dtype=torch.float64))
    g = torch.tensor([[0.2, 0.4], [-0.3, 1e-3]], dtype=torch.float64)
    opt = Lion([w], lr=0.02, betas=(0.5, 0.9), weight_decay=2.0)
    expected, m = values(w), np.zeros((2, 2))
    for scale in (1.0, -0.5, 2.0):
        w.grad = None
        linear_backward([w], [g * scale])
        opt.step()
        expected, m = oracle_step(expected, m, values(g) * scale, 0.02, (0.5, 0.9), 2.0)
    assert w.dtype == torch.float64 and opt.state[w]["exp_avg"].dtype == torch.float64
    assert _allclose(values(w), expected, rtol=1e-12, atol=1e-14)
    assert _allclose(values(opt.state[w]["exp_avg"]), m, rtol=1e-12, atol=1e-14)


def test_each_group_uses_its_own_learning_rate():
    fast, slow = nn.Parameter(torch.zeros(4)), nn.Parameter(torch.zeros(4))
    opt = Lion([{"params": [fast], "lr": 0.1}, {"params": [slow]}], lr=0.001)
    g = torch.tensor([1.0, -1.0, 0.5, -3.0])
    linear_backward([fast, slow], [g, g])
    opt.step()
    assert _allclose(values(fast), -0.1 * np.sign(g.numpy()), rtol=1e-6, atol=1e-8)
    assert _allclose(values(slow), -0.001 * np.sign(g.numpy()), rtol=1e-6, atol=1e-9)


def test_each_group_uses_its_own_weight_decay_and_betas():
    a, b = parameter([2.0, 2.0]), parameter([2.0, 2.0])
    opt = Lion([{"params": [a], "weight_decay": 1.0, "betas": (0.5, 0.5)}, {"params": [b]}], lr=0.1)
    linear_backward([a, b], [torch.tensor([0.0, 0.0]), torch.tensor([0.0, 0.0])])
    opt.step()
    assert _allclose(values(a), [1.8, 1.8], rtol=1e-6, atol=1e-7)
    assert _allclose(values(b), [2.0, 2.0], rtol=1e-6, atol=1e-7)
    a.grad, b.grad = None, None
    linear_backward([a, b], [torch.tensor([1.0, -1.0]), torch.tensor([1.0, -1.0])])
    opt.step()
    assert _allclose(values(opt.state[a]["exp_avg"]), [0.5, -0.5], rtol=1e-6, atol=1e-8)
    assert _allclose(values(opt.state[b]["exp_avg"]), [0.01, -0.01], rtol=1e-5, atol=1e-9)


def test_a_zero_learning_rate_keeps_the_weights_and_moves_the_momentum():
    w = parameter([0.5, -0.5, 1.0])
    opt = Lion([w], lr=0.0, betas=(0.9, 0.9), weight_decay=3.0)
    linear_backward([w], [torch.tensor([1.0, 2.0, -1.0])])
    opt.step()
    assert _array_equal(values(w), np.array([0.5, -0.5, 1.0], dtype=np.float32).astype(np.float64))
    assert _allclose(values(opt.state[w]["exp_avg"]), [0.1, 0.2, -0.1], rtol=1e-5, atol=1e-8)


def test_hyperparameters_are_left_unchanged():
    w, v = nn.Parameter(torch.ones(3)), nn.Parameter(torch.ones(2))
    opt = Lion([{"params": [w], "lr": 0.05, "weight_decay": 0.1}, {"params": [v], "betas": (0.7, 0.8)}], lr=0.01)
    linear_backward([w, v], [torch.ones(3), -torch.ones(2)])
    opt.step()
    assert [(g["lr"], tuple(g["betas"]), g["weight_decay"]) for g in opt.param_groups] == [(0.05, (0.9, 0.99), 0.1), (0.01, (0.7, 0.8), 0.0)]
    assert opt.defaults == {"lr": 0.01, "betas": (0.9, 0.99), "weight_decay": 0.0}


def test_lion_minimises_a_quadratic():
    torch.manual_seed(5)
    target = torch.randn(8)
    w = nn.Parameter(torch.zeros(8))
    opt = Lion([w], lr=0.01, betas=(0.9, 0.99))
    for _ in range(600):
        opt.zero_grad()
        ((w - target) ** 2).sum().backward()
        opt.step()
    assert np.max(np.abs(values(w) - values(target))) < 0.05
