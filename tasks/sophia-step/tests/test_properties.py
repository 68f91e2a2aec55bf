"""Property tests for SophiaG.step, SophiaG.update_hessian and _single_tensor_sophiag
(sophia.py), written from the paper (Algorithm 3, the Gauss-Newton-Bartlett estimator)
in the code's parameterization that the instruction states.

Gradients come from backward passes, as in training: a linear loss (coefficients . w)
gives the gradient `coefficients` exactly; small language models give realistic ones,
with the Hessian gradient from labels sampled from the model itself. The oracle below is
written from the paper, in float64 numpy:
  update_hessian: h <- beta2 * h + (1 - beta2) * g * g
  step:           w <- w * (1 - lr * wd);  m <- beta1 * m + (1 - beta1) * g
                  w <- w - lr * clip(m / (rho * bs * h + eps), -1, 1)
"""
import numpy as np
import pytest
import torch
from torch import nn
import torch.nn.functional as F

_allclose = np.allclose
_array_equal = np.array_equal
_raises = pytest.raises

from sophia import SophiaG, _single_tensor_sophiag  # noqa: E402

EPS = 1e-15


def values(t):
    return np.array(t.detach().cpu().numpy(), dtype=np.float64, copy=True)


def oracle_hessian(h, g, beta2):
    return beta2 * h + (1.0 - beta2) * g * g


def oracle_step(w, m, h, g, lr, beta1, rho, wd, bs, maximize=False):
    g = -g if maximize else g
    w = w * (1.0 - lr * wd)
    m = beta1 * m + (1.0 - beta1) * g
    return w - lr * np.clip(m / (rho * bs * h + EPS), -1.0, 1.0), m


def linear_backward(params, coefficients):
    loss = sum((p * c).sum() for p, c in zip(params, coefficients))
    loss.backward()
    return loss


def parameter(v, dtype=torch.float32):
    return nn.Parameter(torch.tensor(v, dtype=dtype))


class TinyLM(nn.Module):
    def __init__(self, vocab=9, dim=4, hidden=5, sparse=False):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim, sparse=sparse)
        self.fc = nn.Linear(dim, hidden)
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, idx):
        return self.lm_head(torch.tanh(self.fc(self.wte(idx))))


def lm_loss(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))


def sampled_lm_loss(model, x):
    logits = model(x)
    y = torch.distributions.Categorical(logits=logits).sample()
    return F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))


def state_values(opt, p):
    st = opt.state[p]
    return values(st["exp_avg"]), values(st["hessian"]), float(st["step"])


# ------------------------------------------------------------------ the whole loop


def test_training_matches_an_oracle_of_algorithm_3():
    torch.manual_seed(0)
    model = TinyLM()
    groups = [
        {"params": [model.fc.weight, model.lm_head.weight], "weight_decay": 0.2},
        {"params": [model.wte.weight, model.fc.bias, model.lm_head.bias], "weight_decay": 0.0, "lr": 0.01},
    ]
    opt = SophiaG(groups, lr=0.02, betas=(0.9, 0.8), rho=0.05)
    params = [p for g in opt.param_groups for p in g["params"]]
    expected = {id(p): [values(p), np.zeros(tuple(p.shape)), np.zeros(tuple(p.shape)), 0] for p in params}
    bs = 1024
    for it in range(6):
        x = torch.randint(0, 7, (3, 5))
        opt.zero_grad(set_to_none=True)
        lm_loss(model, x, torch.roll(x, -1, 1)).backward()
        grads = {id(p): values(p.grad) for p in params}
        opt.step(bs=bs)
        for group in opt.param_groups:
            for p in group["params"]:
                w, m, h, n = expected[id(p)]
                w, m = oracle_step(w, m, h, grads[id(p)], group["lr"], group["betas"][0], group["rho"], group["weight_decay"], bs)
                expected[id(p)] = [w, m, h, n + 1]
        if it % 2 == 1:
            opt.zero_grad(set_to_none=True)
            sampled_lm_loss(model, x).backward()
            grads = {id(p): values(p.grad) for p in params}
            opt.update_hessian()
            for group in opt.param_groups:
                for p in group["params"]:
                    expected[id(p)][2] = oracle_hessian(expected[id(p)][2], grads[id(p)], group["betas"][1])
        for p in params:
            w, m, h, n = expected[id(p)]
            em, eh, en = state_values(opt, p)
            assert _allclose(values(p), w, rtol=1e-5, atol=1e-6)
            assert _allclose(em, m, rtol=1e-5, atol=1e-8)
            assert _allclose(eh, h, rtol=1e-5, atol=1e-12)
            assert en == n


# ------------------------------------------------------------------ update_hessian


def test_update_hessian_is_a_moving_average_of_squared_gradients():
    w = parameter([1.0, -2.0, 0.5])
    opt = SophiaG([w], lr=0.01, betas=(0.9, 0.75))
    g1, g2 = torch.tensor([1.0, -3.0, 0.5]), torch.tensor([2.0, 1.0, -4.0])
    linear_backward([w], [g1])
    opt.update_hessian()
    w.grad = None
    linear_backward([w], [g2])
    opt.update_hessian()
    expected = 0.75 * 0.25 * g1.numpy() ** 2 + 0.25 * g2.numpy() ** 2
    assert _allclose(values(opt.state[w]["hessian"]), expected, rtol=1e-6, atol=1e-9)


def test_update_hessian_leaves_weights_momentum_counter_and_gradient_alone():
    w = parameter([1.0, -2.0])
    opt = SophiaG([w], lr=0.1, weight_decay=0.5)
    linear_backward([w], [torch.tensor([1.0, 1.0])])
    opt.step(bs=10)
    m, _, n = state_values(opt, w)
    before, grad = values(w), values(w.grad)
    opt.update_hessian()
    assert _array_equal(values(w), before)
    assert _array_equal(values(opt.state[w]["exp_avg"]), m)
    assert float(opt.state[w]["step"]) == n == 1.0
    assert _array_equal(values(w.grad), grad)


def test_update_hessian_before_the_first_step_creates_the_state():
    w = parameter([[0.5, -0.5], [1.0, 2.0]])
    opt = SophiaG([w], lr=0.01)
    linear_backward([w], [torch.tensor([[1.0, 2.0], [3.0, 4.0]])])
    opt.update_hessian()
    st = opt.state[w]
    assert set(st) == {"step", "exp_avg", "hessian"}
    assert torch.is_tensor(st["step"]) and st["step"].dim() == 0 and float(st["step"]) == 0.0
    assert _array_equal(values(st["exp_avg"]), np.zeros((2, 2)))
    assert _allclose(values(st["hessian"]), 0.01 * np.array([[1.0, 4.0], [9.0, 16.0]]), rtol=1e-5, atol=1e-9)


def test_update_hessian_skips_parameters_without_gradient():
    used, idle = parameter([1.0]), parameter([2.0])
    opt = SophiaG([used, idle], lr=0.01)
    linear_backward([used], [torch.tensor([3.0])])
    opt.update_hessian()
    assert used in opt.state and idle not in opt.state


def test_update_hessian_uses_each_groups_beta2():
    a, b = parameter([1.0]), parameter([1.0])
    opt = SophiaG([{"params": [a], "betas": (0.9, 0.5)}, {"params": [b]}], lr=0.01, betas=(0.965, 0.99))
    linear_backward([a, b], [torch.tensor([2.0]), torch.tensor([2.0])])
    opt.update_hessian()
    assert _allclose(values(opt.state[a]["hessian"]), [2.0], rtol=1e-6)
    assert _allclose(values(opt.state[b]["hessian"]), [0.04], rtol=1e-5)


# ------------------------------------------------------------------ the update rule


def test_without_a_hessian_estimate_every_coordinate_moves_by_lr():
    torch.manual_seed(1)
    w = nn.Parameter(torch.randn(3, 4))
    before = values(w)
    opt = SophiaG([w], lr=0.05, weight_decay=0.0)
    g = torch.randn(3, 4)
    linear_backward([w], [g])
    opt.step(bs=100)
    assert _allclose(before - values(w), 0.05 * np.sign(g.numpy()), rtol=1e-5, atol=1e-7)


def test_zero_momentum_and_zero_curvature_move_only_by_weight_decay():
    w = parameter([[1.0, -2.0], [0.5, 3.0]])
    opt = SophiaG([w], lr=0.1, weight_decay=0.5)
    g = torch.tensor([[1.0, 2.0], [0.0, 0.0]])  # the second row: an unused embedding row
    linear_backward([w], [g])
    opt.update_hessian()
    opt.step(bs=64)
    assert _allclose(values(w)[1], np.array([0.5, 3.0]) * 0.95, rtol=1e-6, atol=1e-8)
    assert np.all(np.isfinite(values(w)))


def curvature_then_step(hess_coeffs, grad_coeffs, bs, rho=0.04, lr=0.1, betas=(0.5, 0.5), wd=0.0, w0=None):
    """A Hessian estimate from gradient `hess_coeffs`, then one step with `grad_coeffs`."""
    w = parameter(w0 if w0 is not None else [0.0] * len(grad_coeffs))
    opt = SophiaG([w], lr=lr, betas=betas, rho=rho, weight_decay=wd)
    linear_backward([w], [torch.tensor(hess_coeffs)])
    opt.update_hessian()
    w.grad = None
    linear_backward([w], [torch.tensor(grad_coeffs)])
    before = values(w)
    opt.step(bs=bs)
    return before, values(w), opt, w


def test_small_ratios_are_preconditioned_not_clipped():
    # h = 0.5 * c^2, m = 0.5 * g; ratio = m / (rho * bs * h) = g / (rho * bs * c^2)
    c, g = np.array([1.0, 2.0, 0.5]), np.array([0.2, -1.0, 0.05])
    before, after, _, _ = curvature_then_step(list(c), list(g), bs=50, rho=0.1)
    ratio = g / (0.1 * 50 * c ** 2)
    assert np.all(np.abs(ratio) < 1)
    assert _allclose(after - before, -0.1 * ratio, rtol=1e-5, atol=1e-9)


def test_large_ratios_are_clipped_to_one_learning_rate():
    c, g = np.array([0.1, 0.2, 0.05]), np.array([3.0, -2.0, 1.0])
    before, after, _, _ = curvature_then_step(list(c), list(g), bs=10, rho=0.04)
    assert np.all(np.abs(g / (0.04 * 10 * c ** 2)) > 1)
    assert _allclose(after - before, -0.1 * np.sign(g), rtol=1e-6, atol=1e-9)


def test_bs_multiplies_the_stored_curvature():
    c, g = [1.0, 2.0, 1.5], [0.5, -0.8, 0.3]
    b1, a1, _, _ = curvature_then_step(c, g, bs=40, rho=0.05)
    b2, a2, _, _ = curvature_then_step(c, g, bs=160, rho=0.05)
    assert _allclose((a1 - b1) / (a2 - b2), 4.0, rtol=1e-5)


def test_rho_multiplies_the_curvature():
    c, g = [1.0, 2.0, 1.5], [0.5, -0.8, 0.3]
    b1, a1, _, _ = curvature_then_step(c, g, bs=100, rho=0.02)
    b2, a2, _, _ = curvature_then_step(c, g, bs=100, rho=0.06)
    assert _allclose((a1 - b1) / (a2 - b2), 3.0, rtol=1e-5)


def test_the_default_bs_is_5120():
    c, g = [0.02, 0.05, 0.01], [0.003, -0.02, 0.0001]
    results = []
    for kwargs in ({}, {"bs": 5120}):
        w = parameter([0.1, 0.2, 0.3])
        opt = SophiaG([w], lr=0.1, betas=(0.5, 0.5), rho=0.04)
        linear_backward([w], [torch.tensor(c)])
        opt.update_hessian()
        w.grad = None
        linear_backward([w], [torch.tensor(g)])
        opt.step(**kwargs)
        results.append(values(w))
    assert _array_equal(results[0], results[1])
    assert not _allclose(results[0], [0.1, 0.2, 0.3] - 0.1 * np.sign(g))  # not all clipped


def test_weight_decay_is_decoupled_and_applied_before_the_update():
    # a large weight, a small opposite gradient, strong decay: coupled L2 would flip the momentum
    before, after, opt, w = curvature_then_step([1.0, 1.0], [-0.01, -0.02], bs=100, rho=0.05, lr=0.1, wd=2.0, w0=[4.0, 6.0])
    m = 0.5 * np.array([-0.01, -0.02])
    ratio = np.clip(m / (0.05 * 100 * 0.5 + EPS), -1, 1)
    assert _allclose(after, before * (1 - 0.2) - 0.1 * ratio, rtol=1e-6, atol=1e-9)
    assert _allclose(values(opt.state[w]["exp_avg"]), m, rtol=1e-6, atol=1e-12)


def test_momentum_is_a_moving_average_with_beta1():
    w = nn.Parameter(torch.zeros(3))
    opt = SophiaG([w], lr=0.001, betas=(0.6, 0.99), weight_decay=0.0)
    g = torch.tensor([1.0, -2.0, 0.5])
    for _ in range(3):
        w.grad = None
        linear_backward([w], [g])
        opt.step(bs=8)
    assert _allclose(values(opt.state[w]["exp_avg"]), (1 - 0.6 ** 3) * g.numpy(), rtol=1e-5, atol=1e-8)


def test_maximize_ascends():
    results = []
    for maximize, sign in ((True, 1.0), (False, -1.0)):
        w = parameter([0.3, -0.2, 0.1])
        opt = SophiaG([w], lr=0.05, betas=(0.5, 0.5), rho=0.04, weight_decay=0.1, maximize=maximize)
        linear_backward([w], [torch.tensor([1.0, 2.0, 0.5])])
        opt.update_hessian()
        w.grad = None
        linear_backward([w], [sign * torch.tensor([0.4, -1.5, 0.2])])
        opt.step(bs=20)
        results.append((values(w), values(opt.state[w]["exp_avg"])))
    assert _allclose(results[0][0], results[1][0], rtol=1e-6, atol=1e-9)
    assert _allclose(results[0][1], results[1][1], rtol=1e-6, atol=1e-9)


# ------------------------------------------------------------------ state and bookkeeping


def test_the_state_has_exactly_step_momentum_and_hessian():
    w = nn.Parameter(torch.randn(2, 3, dtype=torch.float64))
    opt = SophiaG([w], lr=0.01)
    linear_backward([w], [torch.ones(2, 3, dtype=torch.float64)])
    opt.step(bs=4)
    st = opt.state[w]
    assert set(st) == {"step", "exp_avg", "hessian"}
    assert torch.is_tensor(st["step"]) and st["step"].dim() == 0 and st["step"].dtype == torch.float32
    for key in ("exp_avg", "hessian"):
        assert tuple(st[key].shape) == (2, 3) and st[key].dtype == torch.float64


def test_the_step_counter_counts_steps_in_place():
    w = nn.Parameter(torch.ones(2))
    opt = SophiaG([w], lr=0.01)
    counters = []
    for t in range(3):
        w.grad = None
        linear_backward([w], [torch.tensor([1.0, -1.0])])
        opt.step(bs=4)
        if t == 1:
            opt.update_hessian()
        counters.append(opt.state[w]["step"])
    assert [float(c) for c in counters] == [3.0, 3.0, 3.0]
    assert counters[0] is counters[1] is counters[2]


def test_state_tensors_are_updated_in_place():
    w = nn.Parameter(torch.ones(3))
    opt = SophiaG([w], lr=0.01)
    linear_backward([w], [torch.tensor([1.0, -1.0, 2.0])])
    opt.step(bs=4)
    m, h = opt.state[w]["exp_avg"], opt.state[w]["hessian"]
    pointers = (m.data_ptr(), h.data_ptr())
    opt.update_hessian()
    opt.step(bs=4)
    assert opt.state[w]["exp_avg"] is m and opt.state[w]["hessian"] is h
    assert (m.data_ptr(), h.data_ptr()) == pointers
    assert float(h.abs().sum()) > 0


def test_parameters_without_gradient_are_untouched_and_get_no_state():
    used, idle = parameter([1.0, 2.0]), parameter([3.0, -4.0])
    opt = SophiaG([used, idle], lr=0.1, weight_decay=0.3)
    linear_backward([used], [torch.tensor([1.0, -1.0])])
    opt.step(bs=4)
    assert _array_equal(values(idle), [3.0, -4.0])
    assert idle not in opt.state and used in opt.state


def test_sparse_gradients_raise():
    model = TinyLM(sparse=True)
    opt = SophiaG(model.parameters(), lr=0.01)
    x = torch.randint(0, 9, (2, 3))
    lm_loss(model, x, torch.roll(x, -1, 1)).backward()
    assert model.wte.weight.grad.is_sparse
    with _raises(RuntimeError) as raised:
        opt.step(bs=6)
    assert raised.type is RuntimeError  # not a NotImplementedError, which is a RuntimeError too


def test_parameters_are_changed_in_place():
    torch.manual_seed(2)
    model = TinyLM()
    opt = SophiaG(model.parameters(), lr=0.01)
    x = torch.randint(0, 9, (2, 4))
    lm_loss(model, x, torch.roll(x, -1, 1)).backward()
    params = [p for g in opt.param_groups for p in g["params"]]
    pointers = [p.data_ptr() for p in params]
    before = [values(p) for p in params]
    opt.step(bs=8)
    after = [p for g in opt.param_groups for p in g["params"]]
    assert len(after) == len(params) and all(a is b for a, b in zip(after, params))
    assert [p.data_ptr() for p in params] == pointers
    assert not all(_array_equal(values(p), b) for p, b in zip(params, before))
    assert all(isinstance(p, nn.Parameter) and p.requires_grad and p.grad_fn is None for p in params)


def test_gradients_are_left_unchanged_by_step():
    torch.manual_seed(3)
    model = TinyLM()
    opt = SophiaG(model.parameters(), lr=0.01, maximize=True)
    x = torch.randint(0, 9, (2, 4))
    lm_loss(model, x, torch.roll(x, -1, 1)).backward()
    grads = [values(p.grad) for p in model.parameters()]
    opt.step(bs=8)
    assert all(_array_equal(values(p.grad), g) for p, g in zip(model.parameters(), grads))


def test_float64_parameters_match_the_oracle():
    w = nn.Parameter(torch.tensor([[0.3, -0.7], [1.1, 0.05]], dtype=torch.float64))
    opt = SophiaG([w], lr=0.02, betas=(0.7, 0.6), rho=0.03, weight_decay=0.5)
    ew, m, h = values(w), np.zeros((2, 2)), np.zeros((2, 2))
    for k, (g, c) in enumerate((([0.2, 0.4], [-0.3, 1e-3]), ([-0.1, 0.5], [0.2, -0.4]), ([0.3, -0.2], [0.1, 0.6]))):
        g = np.array([g, c])
        w.grad = None
        linear_backward([w], [torch.tensor(g, dtype=torch.float64)])
        opt.step(bs=30)
        ew, m = oracle_step(ew, m, h, g, 0.02, 0.7, 0.03, 0.5, 30)
        if k == 0:
            opt.update_hessian()
            h = oracle_hessian(h, g, 0.6)
    assert w.dtype == torch.float64
    assert _allclose(values(w), ew, rtol=1e-12, atol=1e-14)
    assert _allclose(values(opt.state[w]["exp_avg"]), m, rtol=1e-12, atol=1e-14)


def test_a_zero_learning_rate_keeps_the_weights():
    w = parameter([0.5, -0.5])
    opt = SophiaG([w], lr=0.0, betas=(0.5, 0.5), weight_decay=0.3)
    linear_backward([w], [torch.tensor([1.0, 2.0])])
    opt.step(bs=4)
    assert _array_equal(values(w), [0.5, -0.5])
    assert _allclose(values(opt.state[w]["exp_avg"]), [0.5, 1.0], rtol=1e-6)
    assert float(opt.state[w]["step"]) == 1.0


def test_each_group_uses_its_own_hyperparameters():
    a, b = parameter([1.0, 1.0]), parameter([1.0, 1.0])
    opt = SophiaG([{"params": [a], "lr": 0.1, "weight_decay": 1.0}, {"params": [b]}], lr=0.01, weight_decay=0.0)
    linear_backward([a, b], [torch.tensor([1.0, -1.0]), torch.tensor([1.0, -1.0])])
    opt.step(bs=4)
    assert _allclose(values(a), np.array([0.9, 0.9]) - 0.1 * np.array([1.0, -1.0]), rtol=1e-6)
    assert _allclose(values(b), np.array([1.0, 1.0]) - 0.01 * np.array([1.0, -1.0]), rtol=1e-6)


def test_hyperparameters_are_left_unchanged():
    w, v = nn.Parameter(torch.ones(3)), nn.Parameter(torch.ones(2))
    opt = SophiaG([{"params": [w], "lr": 0.05, "rho": 0.1}, {"params": [v], "betas": (0.7, 0.8)}], lr=0.01)
    linear_backward([w, v], [torch.ones(3), -torch.ones(2)])
    opt.update_hessian()
    opt.step(bs=16)
    summary = [(g["lr"], tuple(g["betas"]), g["rho"], g["weight_decay"], g["maximize"], g["capturable"]) for g in opt.param_groups]
    assert summary == [(0.05, (0.965, 0.99), 0.1, 0.1, False, False), (0.01, (0.7, 0.8), 0.04, 0.1, False, False)]
    assert opt.defaults == {"lr": 0.01, "betas": (0.965, 0.99), "rho": 0.04, "weight_decay": 0.1, "maximize": False, "capturable": False}


# ------------------------------------------------------------------ the closure


def test_step_returns_what_the_closure_returns():
    torch.manual_seed(4)
    model = TinyLM()
    opt = SophiaG(model.parameters(), lr=0.01)
    x = torch.randint(0, 9, (2, 4))
    returned = []

    def closure():
        opt.zero_grad()
        loss = lm_loss(model, x, torch.roll(x, -1, 1))
        loss.backward()
        returned.append(loss)
        return loss

    assert opt.step(closure, bs=8) is returned[0]


def test_the_closure_runs_once_with_gradients_enabled():
    w = nn.Parameter(torch.ones(3))
    opt = SophiaG([w], lr=0.01)
    seen = []

    def closure():
        seen.append(torch.is_grad_enabled())
        opt.zero_grad()
        return linear_backward([w], [torch.tensor([1.0, -1.0, 2.0])])

    opt.step(closure)
    assert seen == [True]


def test_the_update_uses_the_gradients_the_closure_leaves():
    torch.manual_seed(5)
    a, b = TinyLM(), TinyLM()
    b.load_state_dict(a.state_dict())
    opt_a, opt_b = SophiaG(a.parameters(), lr=0.01), SophiaG(b.parameters(), lr=0.01)
    x = torch.randint(0, 9, (3, 4))
    y = torch.roll(x, -1, 1)
    lm_loss(a, x.flip(0), y).backward()  # a stale gradient that the closure replaces

    def closure():
        opt_a.zero_grad()
        loss = lm_loss(a, x, y)
        loss.backward()
        return loss

    opt_a.step(closure, bs=12)
    lm_loss(b, x, y).backward()
    opt_b.step(bs=12)
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert _allclose(values(pa), values(pb), rtol=0, atol=1e-7)


def test_step_without_closure_returns_none():
    w = nn.Parameter(torch.ones(2))
    opt = SophiaG([w], lr=0.01)
    linear_backward([w], [torch.tensor([1.0, 2.0])])
    assert opt.step(bs=4) is None


# ------------------------------------------------------------------ the helper on its own


def helper_inputs(dtype=torch.float32):
    torch.manual_seed(6)
    params = [nn.Parameter(torch.randn(3, 2, dtype=dtype)), nn.Parameter(torch.randn(4, dtype=dtype))]
    grads = [torch.randn(3, 2, dtype=dtype), torch.randn(4, dtype=dtype)]
    exp_avgs = [0.1 * torch.randn(3, 2, dtype=dtype), 0.1 * torch.randn(4, dtype=dtype)]
    hessian = [torch.rand(3, 2, dtype=dtype), torch.rand(4, dtype=dtype)]
    steps = [torch.tensor(5.0), torch.tensor(2.0)]
    return params, grads, exp_avgs, hessian, steps


HELPER_OPTIONS = dict(bs=12, beta1=0.8, beta2=0.95, rho=0.05, lr=0.03, weight_decay=0.4, maximize=False, capturable=False)


def test_the_helper_applies_the_update_to_each_parameter():
    params, grads, exp_avgs, hessian, steps = helper_inputs()
    expected = [
        oracle_step(values(p), values(m), values(h), values(g), 0.03, 0.8, 0.05, 0.4, 12)
        for p, g, m, h in zip(params, grads, exp_avgs, hessian)
    ]
    with torch.no_grad():
        out = _single_tensor_sophiag(params, grads, exp_avgs, hessian, steps, **HELPER_OPTIONS)
    assert out is None
    for p, m, (ew, em) in zip(params, exp_avgs, expected):
        assert _allclose(values(p), ew, rtol=1e-5, atol=1e-7)
        assert _allclose(values(m), em, rtol=1e-5, atol=1e-8)
    assert [float(s) for s in steps] == [6.0, 3.0]


def test_the_helper_reads_but_does_not_change_hessian_and_gradients():
    params, grads, exp_avgs, hessian, steps = helper_inputs()
    g0, h0 = [values(g) for g in grads], [values(h) for h in hessian]
    with torch.no_grad():
        _single_tensor_sophiag(params, grads, exp_avgs, hessian, steps, **HELPER_OPTIONS)
    assert all(_array_equal(values(g), e) for g, e in zip(grads, g0))
    assert all(_array_equal(values(h), e) for h, e in zip(hessian, h0))
