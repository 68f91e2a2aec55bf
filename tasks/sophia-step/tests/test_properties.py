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

The optimizer runs in the candidate process (lmr_bridge): the probes below build it there
from weights, coefficients and batches this file chose, drive it, and return plain data
(values, state, flags). Every expected value is computed here from those same inputs: the
language model's gradients too, by a copy of the model in this process.
"""
import numpy as np
import pytest
import torch
from torch import nn
import torch.nn.functional as F
from lmr_bridge import probe, probe_helper

_allclose = np.allclose
_array_equal = np.array_equal
_raises = pytest.raises

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


@probe_helper
class TinyLM(nn.Module):
    def __init__(self, vocab=9, dim=4, hidden=5, sparse=False):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim, sparse=sparse)
        self.fc = nn.Linear(dim, hidden)
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, idx):
        return self.lm_head(torch.tanh(self.fc(self.wte(idx))))


@probe_helper
def lm_loss(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))


def lm_weights(seed):
    """Initial weights of a TinyLM, chosen here (the probes load them)."""
    torch.manual_seed(seed)
    return {k: v.detach().clone() for k, v in TinyLM().state_dict().items()}


def lm_gradients(weights, x, y):
    """(loss, {name: gradient}) of a TinyLM holding `weights` (float32), computed here."""
    model = TinyLM()
    model.load_state_dict({k: torch.as_tensor(v, dtype=torch.float32) for k, v in weights.items()})
    loss = lm_loss(model, x, y)
    loss.backward()
    return float(loss), {k: values(p.grad) for k, p in model.named_parameters()}


def lm_sample(weights, x, gen):
    """Labels sampled from the output distribution of a TinyLM holding `weights` (here)."""
    model = TinyLM()
    model.load_state_dict({k: torch.as_tensor(v, dtype=torch.float32) for k, v in weights.items()})
    with torch.no_grad():
        probs = torch.softmax(model(x), dim=-1)
    return torch.multinomial(probs.view(-1, probs.size(-1)), 1, generator=gen).view(x.shape)


# ------------------------------------------------------------------ probes (run in the candidate)


@probe_helper
def linear_backward(params, coefficients):
    """Sets each parameter's .grad to its coefficient tensor through a backward pass
    (a coefficient None leaves that parameter out of the loss)."""
    loss = sum((p * c).sum() for p, c in zip(params, coefficients) if c is not None)
    loss.backward()
    return loss


@probe_helper
def snapshot(opt, params, returned):
    def state_of(p):
        if p not in opt.state:
            return None
        return {k: (v.detach().clone() if torch.is_tensor(v) else v) for k, v in opt.state[p].items()}

    return {
        "params": [p.detach().clone() for p in params],
        "grads": [None if p.grad is None else p.grad.detach().clone() for p in params],
        "state": [state_of(p) for p in params],
        "returned": returned,
    }


@probe
def sophia_linear_run(groups, options, actions, dtype="float32"):
    """SophiaG over parameters built from `groups` ([{"params": [values...], hyperparameters...}])
    with SophiaG(..., **options). Each action: {"op": "step" | "hessian", "grads": one
    coefficient or None per parameter (every .grad is set to None first), or "keep" (the
    gradients as the last action left them), "bs": step's bs (None: its default)}. After each
    action: the parameters, their gradients, their state and what the call returned."""
    from sophia import SophiaG

    torch_dtype = getattr(torch, dtype)
    params, specs = [], []
    for group in groups:
        ps = [nn.Parameter(torch.tensor(v, dtype=torch_dtype)) for v in group["params"]]
        params.extend(ps)
        specs.append(dict(group, params=ps))
    opt = SophiaG(specs, **options)
    seen = []
    for action in actions:
        if action["grads"] != "keep":
            for p in params:
                p.grad = None
            coefficients = [None if c is None else torch.tensor(c, dtype=torch_dtype) for c in action["grads"]]
            if any(c is not None for c in coefficients):
                linear_backward(params, coefficients)
        if action["op"] == "hessian":
            returned = opt.update_hessian()
        elif action.get("bs") is None:
            returned = opt.step()
        else:
            returned = opt.step(bs=action["bs"])
        seen.append(snapshot(opt, params, returned))
    return {
        "steps": seen,
        "groups": [(g["lr"], tuple(g["betas"]), g["rho"], g["weight_decay"], g["maximize"], g["capturable"]) for g in opt.param_groups],
        "defaults": dict(opt.defaults),
    }


@probe
def sophia_lm_training(weights, groups, options, iterations):
    """A TinyLM with `weights`, SophiaG over parameter groups (lists of parameter names with
    their hyperparameters); each iteration: a backward pass on (x, y), step(bs), and with
    `hessian_labels`, a backward pass on those labels and update_hessian(). After each
    iteration the parameters and the state, by name."""
    from sophia import SophiaG

    model = TinyLM()
    model.load_state_dict(weights)
    named = dict(model.named_parameters())
    opt = SophiaG([dict(g, params=[named[n] for n in g["params"]]) for g in groups], **options)
    seen = []
    for it in iterations:
        opt.zero_grad(set_to_none=True)
        lm_loss(model, it["x"], it["y"]).backward()
        opt.step(bs=it["bs"])
        if it["hessian_labels"] is not None:
            opt.zero_grad(set_to_none=True)
            lm_loss(model, it["x"], it["hessian_labels"]).backward()
            opt.update_hessian()
        seen.append({
            "params": {n: p.detach().clone() for n, p in named.items()},
            "state": {n: {k: v.detach().clone() for k, v in opt.state[p].items()} for n, p in named.items()},
        })
    return seen


@probe
def sophia_counters(coefficients, steps, hessian_after):
    """The state's step counter over several steps (update_hessian after step `hessian_after`):
    its value after each step and whether it stayed one tensor."""
    from sophia import SophiaG

    w = nn.Parameter(torch.ones(len(coefficients)))
    opt = SophiaG([w], lr=0.01)
    counters = []
    for t in range(steps):
        w.grad = None
        linear_backward([w], [torch.tensor(coefficients)])
        opt.step(bs=4)
        if t == hessian_after:
            opt.update_hessian()
        counters.append(opt.state[w]["step"])
    return {"values": [float(c) for c in counters], "one_tensor": all(c is counters[0] for c in counters)}


@probe
def sophia_state_storage(coefficients):
    """Whether step and update_hessian keep the momentum and Hessian tensors (object and storage)."""
    from sophia import SophiaG

    w = nn.Parameter(torch.ones(len(coefficients)))
    opt = SophiaG([w], lr=0.01)
    linear_backward([w], [torch.tensor(coefficients)])
    opt.step(bs=4)
    m, h = opt.state[w]["exp_avg"], opt.state[w]["hessian"]
    pointers = (m.data_ptr(), h.data_ptr())
    opt.update_hessian()
    opt.step(bs=4)
    return {
        "same_objects": opt.state[w]["exp_avg"] is m and opt.state[w]["hessian"] is h,
        "same_storage": (m.data_ptr(), h.data_ptr()) == pointers,
        "hessian": h.detach().clone(),
    }


@probe
def sophia_sparse_step(weights, x, y):
    """step on a TinyLM whose embedding has a sparse gradient: what it raises comes back as
    the nearest builtin exception."""
    from sophia import SophiaG

    model = TinyLM(sparse=True)
    model.load_state_dict(weights)
    opt = SophiaG(model.parameters(), lr=0.01)
    lm_loss(model, x, y).backward()
    if not model.wte.weight.grad.is_sparse:
        return "the embedding's gradient is not sparse: the test's set-up is wrong"
    opt.step(bs=6)
    return "step returned"


@probe
def sophia_lm_step(weights, options, x, y, bs):
    """One step of SophiaG on a TinyLM with `weights`: what an in-place update must keep
    (identity, storage, Parameter-ness, the gradients)."""
    from sophia import SophiaG

    model = TinyLM()
    model.load_state_dict(weights)
    opt = SophiaG(model.parameters(), **options)
    lm_loss(model, x, y).backward()
    params = [p for g in opt.param_groups for p in g["params"]]
    pointers = [p.data_ptr() for p in params]
    grads_before = [p.grad.detach().clone() for p in params]
    opt.step(bs=bs)
    after = [p for g in opt.param_groups for p in g["params"]]
    return {
        "names": [n for n, _ in model.named_parameters()],
        "same_objects": len(after) == len(params) and all(a is b for a, b in zip(after, params)),
        "same_storage": [p.data_ptr() for p in params] == pointers,
        "parameters": all(isinstance(p, nn.Parameter) and p.requires_grad and p.grad_fn is None for p in params),
        "params": [p.detach().clone() for p in params],
        "grads_before": grads_before,
        "grads_after": [p.grad.detach().clone() for p in params],
    }


@probe
def sophia_closure_step(weights, options, x, y, stale_x, bs):
    """step(closure, bs) on a TinyLM with `weights` (a stale gradient from stale_x in .grad
    before, when given, which the closure replaces), and the same step without closure on a
    twin model."""
    from sophia import SophiaG

    a, b = TinyLM(), TinyLM()
    a.load_state_dict(weights)
    b.load_state_dict(weights)
    opt_a, opt_b = SophiaG(a.parameters(), **options), SophiaG(b.parameters(), **options)
    if stale_x is not None:
        lm_loss(a, stale_x, y).backward()
    returned = []

    def closure():
        opt_a.zero_grad()
        loss = lm_loss(a, x, y)
        loss.backward()
        returned.append(loss)
        return loss

    result = opt_a.step(closure, bs=bs)
    lm_loss(b, x, y).backward()
    opt_b.step(bs=bs)
    return {
        "is_closure_value": len(returned) == 1 and result is returned[0],
        "result": result.detach().clone() if torch.is_tensor(result) else result,
        "with_closure": {n: p.detach().clone() for n, p in a.named_parameters()},
        "without_closure": {n: p.detach().clone() for n, p in b.named_parameters()},
    }


@probe
def sophia_closure_calls(coefficients):
    """step(closure) on one parameter: whether gradients were enabled at each closure call."""
    from sophia import SophiaG

    w = nn.Parameter(torch.ones(len(coefficients)))
    opt = SophiaG([w], lr=0.01)
    seen = []

    def closure():
        seen.append(torch.is_grad_enabled())
        opt.zero_grad()
        return linear_backward([w], [torch.tensor(coefficients)])

    opt.step(closure)
    return {"seen": seen, "w": w.detach().clone()}


@probe
def sophia_helper(params, grads, exp_avgs, hessian, steps, options):
    """_single_tensor_sophiag called as step calls it (under torch.no_grad()) on these lists;
    the lists' tensors after the call and what it returned."""
    from sophia import _single_tensor_sophiag

    params = [nn.Parameter(p.clone()) for p in params]
    with torch.no_grad():
        out = _single_tensor_sophiag(params, grads, exp_avgs, hessian, steps, **options)
    return {
        "out": out,
        "params": [p.detach().clone() for p in params],
        "exp_avgs": exp_avgs,
        "hessian": hessian,
        "grads": grads,
        "steps": [float(s) for s in steps],
    }


def one_param(w0, actions, options, dtype="float32"):
    return sophia_linear_run([{"params": [w0]}], options, actions, dtype)["steps"]


def step(grads, bs):
    return {"op": "step", "grads": grads, "bs": bs}


def hessian(grads):
    return {"op": "hessian", "grads": grads}


# ------------------------------------------------------------------ the whole loop


def test_training_matches_an_oracle_of_algorithm_3():
    weights = lm_weights(0)
    groups = [
        {"params": ["fc.weight", "lm_head.weight"], "weight_decay": 0.2},
        {"params": ["wte.weight", "fc.bias", "lm_head.bias"], "weight_decay": 0.0, "lr": 0.01},
    ]
    options = {"lr": 0.02, "betas": (0.9, 0.8), "rho": 0.05}
    bs = 1024
    hyper = {}
    for g in groups:
        for n in g["params"]:
            hyper[n] = (g.get("lr", options["lr"]), options["betas"], options["rho"], g["weight_decay"])

    # the oracle trains its own copy first (float64 weights and state, float32 gradients of a
    # TinyLM holding those weights), sampling the Hessian pass's labels from its own model:
    # the candidate gets the same batches and labels
    gen = torch.Generator().manual_seed(0)
    w = {n: values(t) for n, t in weights.items()}
    m = {n: np.zeros_like(v) for n, v in w.items()}
    h = {n: np.zeros_like(v) for n, v in w.items()}
    iterations, expected = [], []
    for it in range(6):
        x = torch.randint(0, 7, (3, 5), generator=gen)
        y = torch.roll(x, -1, 1)
        _, grads = lm_gradients(w, x, y)
        for n in w:
            lr, betas, rho, wd = hyper[n]
            m_next = betas[0] * m[n] + (1.0 - betas[0]) * grads[n]
            # the check is well posed: no coordinate's clipped step is decided by rounding (a
            # zero momentum over a zero curvature is an unused embedding row, zero in both)
            assert np.all((h[n] > 0) | (m_next == 0) | (np.abs(m_next) > 1e-9)), n
            w[n], m[n] = oracle_step(w[n], m[n], h[n], grads[n], lr, betas[0], rho, wd, bs)
        labels = None
        if it % 2 == 1:
            labels = lm_sample(w, x, gen)
            _, grads = lm_gradients(w, x, labels)
            for n in w:
                h[n] = oracle_hessian(h[n], grads[n], hyper[n][1][1])
        iterations.append({"x": x, "y": y, "bs": bs, "hessian_labels": labels})
        expected.append({n: (w[n].copy(), m[n].copy(), h[n].copy(), it + 1) for n in w})

    got = sophia_lm_training(weights, groups, options, iterations)
    assert len(got) == len(iterations)
    for it, (want, seen) in enumerate(zip(expected, got)):
        for n, (ew, em, eh, en) in want.items():
            st = seen["state"][n]
            assert _allclose(values(seen["params"][n]), ew, rtol=1e-5, atol=1e-6), (it, n)
            assert _allclose(values(st["exp_avg"]), em, rtol=1e-5, atol=1e-8), (it, n)
            assert _allclose(values(st["hessian"]), eh, rtol=1e-5, atol=1e-12), (it, n)
            assert float(st["step"]) == en, (it, n)


# ------------------------------------------------------------------ update_hessian


def test_update_hessian_is_a_moving_average_of_squared_gradients():
    g1, g2 = np.array([1.0, -3.0, 0.5]), np.array([2.0, 1.0, -4.0])
    steps = one_param([1.0, -2.0, 0.5], [hessian([g1.tolist()]), hessian([g2.tolist()])], {"lr": 0.01, "betas": (0.9, 0.75)})
    expected = 0.75 * 0.25 * g1 ** 2 + 0.25 * g2 ** 2
    assert _allclose(values(steps[-1]["state"][0]["hessian"]), expected, rtol=1e-6, atol=1e-9)


def test_update_hessian_leaves_weights_momentum_counter_and_gradient_alone():
    steps = one_param([1.0, -2.0], [step([[1.0, 1.0]], 10), hessian("keep")], {"lr": 0.1, "weight_decay": 0.5})
    first, second = steps
    assert _array_equal(values(second["params"][0]), values(first["params"][0]))
    assert _array_equal(values(second["state"][0]["exp_avg"]), values(first["state"][0]["exp_avg"]))
    assert float(second["state"][0]["step"]) == float(first["state"][0]["step"]) == 1.0
    assert _array_equal(values(second["grads"][0]), [1.0, 1.0])
    # and the step before it: decay, then a clipped step (no curvature yet)
    assert _allclose(values(first["params"][0]), np.array([1.0, -2.0]) * 0.95 - 0.1, rtol=1e-6, atol=1e-8)
    assert second["returned"] is None


def test_update_hessian_before_the_first_step_creates_the_state():
    st = one_param([[0.5, -0.5], [1.0, 2.0]], [hessian([[[1.0, 2.0], [3.0, 4.0]]])], {"lr": 0.01})[0]["state"][0]
    assert set(st) == {"step", "exp_avg", "hessian"}
    assert isinstance(st["step"], torch.Tensor) and st["step"].dim() == 0 and float(st["step"]) == 0.0
    assert _array_equal(values(st["exp_avg"]), np.zeros((2, 2)))
    assert _allclose(values(st["hessian"]), 0.01 * np.array([[1.0, 4.0], [9.0, 16.0]]), rtol=1e-5, atol=1e-9)


def test_update_hessian_skips_parameters_without_gradient():
    got = sophia_linear_run([{"params": [[1.0], [2.0]]}], {"lr": 0.01}, [hessian([[3.0], None])])["steps"][0]
    assert got["state"][0] is not None and got["state"][1] is None
    assert _allclose(values(got["state"][0]["hessian"]), [0.01 * 9.0], rtol=1e-5)


def test_update_hessian_uses_each_groups_beta2():
    groups = [{"params": [[1.0]], "betas": (0.9, 0.5)}, {"params": [[1.0]]}]
    got = sophia_linear_run(groups, {"lr": 0.01, "betas": (0.965, 0.99)}, [hessian([[2.0], [2.0]])])["steps"][0]
    assert _allclose(values(got["state"][0]["hessian"]), [2.0], rtol=1e-6)
    assert _allclose(values(got["state"][1]["hessian"]), [0.04], rtol=1e-5)


# ------------------------------------------------------------------ the update rule


def test_without_a_hessian_estimate_every_coordinate_moves_by_lr():
    gen = torch.Generator().manual_seed(1)
    w0, g = torch.randn(3, 4, generator=gen), torch.randn(3, 4, generator=gen)
    after = one_param(w0.tolist(), [step([g.tolist()], 100)], {"lr": 0.05, "weight_decay": 0.0})[0]["params"][0]
    assert _allclose(values(w0) - values(after), 0.05 * np.sign(values(g)), rtol=1e-5, atol=1e-7)


def test_zero_momentum_and_zero_curvature_move_only_by_weight_decay():
    g = [[1.0, 2.0], [0.0, 0.0]]  # the second row: an unused embedding row
    after = one_param([[1.0, -2.0], [0.5, 3.0]], [hessian([g]), step("keep", 64)], {"lr": 0.1, "weight_decay": 0.5})[-1]["params"][0]
    assert _allclose(values(after)[1], np.array([0.5, 3.0]) * 0.95, rtol=1e-6, atol=1e-8)
    assert np.all(np.isfinite(values(after)))


def curvature_then_step(hess_coeffs, grad_coeffs, bs, rho=0.04, lr=0.1, betas=(0.5, 0.5), wd=0.0, w0=None):
    """A Hessian estimate from gradient `hess_coeffs`, then one step with `grad_coeffs`:
    (weights before the step, after it, the state after it)."""
    w0 = w0 if w0 is not None else [0.0] * len(grad_coeffs)
    steps = one_param(w0, [hessian([hess_coeffs]), step([grad_coeffs], bs)], {"lr": lr, "betas": betas, "rho": rho, "weight_decay": wd})
    return values(steps[0]["params"][0]), values(steps[1]["params"][0]), steps[1]["state"][0]


def oracle_curvature_then_step(hess_coeffs, grad_coeffs, bs, rho=0.04, lr=0.1, betas=(0.5, 0.5), wd=0.0, w0=None):
    w0 = np.array(w0 if w0 is not None else [0.0] * len(grad_coeffs), dtype=np.float32).astype(np.float64)
    h = oracle_hessian(0.0, np.array(hess_coeffs), betas[1])
    return oracle_step(w0, 0.0, h, np.array(grad_coeffs), lr, betas[0], rho, wd, bs)


def test_small_ratios_are_preconditioned_not_clipped():
    # h = 0.5 * c^2, m = 0.5 * g; ratio = m / (rho * bs * h) = g / (rho * bs * c^2)
    c, g = np.array([1.0, 2.0, 0.5]), np.array([0.2, -1.0, 0.05])
    before, after, _ = curvature_then_step(list(c), list(g), bs=50, rho=0.1)
    ratio = g / (0.1 * 50 * c ** 2)
    assert np.all(np.abs(ratio) < 1)
    assert _allclose(after - before, -0.1 * ratio, rtol=1e-5, atol=1e-9)


def test_large_ratios_are_clipped_to_one_learning_rate():
    c, g = np.array([0.1, 0.2, 0.05]), np.array([3.0, -2.0, 1.0])
    before, after, _ = curvature_then_step(list(c), list(g), bs=10, rho=0.04)
    assert np.all(np.abs(g / (0.04 * 10 * c ** 2)) > 1)
    assert _allclose(after - before, -0.1 * np.sign(g), rtol=1e-6, atol=1e-9)


def test_bs_multiplies_the_stored_curvature():
    c, g = [1.0, 2.0, 1.5], [0.5, -0.8, 0.3]
    b1, a1, _ = curvature_then_step(c, g, bs=40, rho=0.05)
    b2, a2, _ = curvature_then_step(c, g, bs=160, rho=0.05)
    assert _allclose((a1 - b1) / (a2 - b2), 4.0, rtol=1e-5)
    assert _allclose(a1, oracle_curvature_then_step(c, g, bs=40, rho=0.05)[0], rtol=1e-5, atol=1e-9)


def test_rho_multiplies_the_curvature():
    c, g = [1.0, 2.0, 1.5], [0.5, -0.8, 0.3]
    b1, a1, _ = curvature_then_step(c, g, bs=100, rho=0.02)
    b2, a2, _ = curvature_then_step(c, g, bs=100, rho=0.06)
    assert _allclose((a1 - b1) / (a2 - b2), 3.0, rtol=1e-5)
    assert _allclose(a2, oracle_curvature_then_step(c, g, bs=100, rho=0.06)[0], rtol=1e-5, atol=1e-9)


def test_the_default_bs_is_5120():
    c, g = [0.02, 0.05, 0.01], [0.003, -0.02, 0.0001]
    options = {"lr": 0.1, "betas": (0.5, 0.5), "rho": 0.04}
    results = [values(one_param([0.1, 0.2, 0.3], [hessian([c]), step([g], bs)], options)[-1]["params"][0]) for bs in (None, 5120)]
    assert _array_equal(results[0], results[1])
    assert not _allclose(results[0], [0.1, 0.2, 0.3] - 0.1 * np.sign(g))  # not all clipped
    expected = oracle_curvature_then_step(c, g, bs=5120, rho=0.04, wd=0.1, w0=[0.1, 0.2, 0.3])[0]  # the default weight decay
    assert _allclose(results[0], expected, rtol=1e-5, atol=1e-8)


def test_weight_decay_is_decoupled_and_applied_before_the_update():
    # a large weight, a small opposite gradient, strong decay: coupled L2 would flip the momentum
    before, after, st = curvature_then_step([1.0, 1.0], [-0.01, -0.02], bs=100, rho=0.05, lr=0.1, wd=2.0, w0=[4.0, 6.0])
    m = 0.5 * np.array([-0.01, -0.02])
    ratio = np.clip(m / (0.05 * 100 * 0.5 + EPS), -1, 1)
    assert _allclose(after, before * (1 - 0.2) - 0.1 * ratio, rtol=1e-6, atol=1e-9)
    assert _allclose(values(st["exp_avg"]), m, rtol=1e-6, atol=1e-12)


def test_momentum_is_a_moving_average_with_beta1():
    g = [1.0, -2.0, 0.5]
    last = one_param([0.0] * 3, [step([g], 8)] * 3, {"lr": 0.001, "betas": (0.6, 0.99), "weight_decay": 0.0})[-1]
    assert _allclose(values(last["state"][0]["exp_avg"]), (1 - 0.6 ** 3) * np.array(g), rtol=1e-5, atol=1e-8)


def test_maximize_ascends():
    results = []
    for maximize, sign in ((True, 1.0), (False, -1.0)):
        options = {"lr": 0.05, "betas": (0.5, 0.5), "rho": 0.04, "weight_decay": 0.1, "maximize": maximize}
        g = (sign * np.array([0.4, -1.5, 0.2])).tolist()
        last = one_param([0.3, -0.2, 0.1], [hessian([[1.0, 2.0, 0.5]]), step([g], 20)], options)[-1]
        results.append((values(last["params"][0]), values(last["state"][0]["exp_avg"])))
    assert _allclose(results[0][0], results[1][0], rtol=1e-6, atol=1e-9)
    assert _allclose(results[0][1], results[1][1], rtol=1e-6, atol=1e-9)
    w, m = oracle_curvature_then_step([1.0, 2.0, 0.5], [-0.4, 1.5, -0.2], bs=20, rho=0.04, lr=0.05, wd=0.1, w0=[0.3, -0.2, 0.1])
    assert _allclose(results[0][0], w, rtol=1e-5, atol=1e-8)
    assert _allclose(results[0][1], m, rtol=1e-5, atol=1e-9)


# ------------------------------------------------------------------ state and bookkeeping


def test_the_state_has_exactly_step_momentum_and_hessian():
    w0 = torch.randn(2, 3, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    st = one_param(w0.tolist(), [step([[[1.0] * 3] * 2], 4)], {"lr": 0.01}, dtype="float64")[0]["state"][0]
    assert set(st) == {"step", "exp_avg", "hessian"}
    assert isinstance(st["step"], torch.Tensor) and st["step"].dim() == 0 and st["step"].dtype == torch.float32
    for key in ("exp_avg", "hessian"):
        assert isinstance(st[key], torch.Tensor)
        assert tuple(st[key].shape) == (2, 3) and st[key].dtype == torch.float64


def test_the_step_counter_counts_steps_in_place():
    got = sophia_counters([1.0, -1.0], 3, 1)
    assert got["values"] == [3.0, 3.0, 3.0]
    assert got["one_tensor"]  # the candidate's report: one tensor, incremented in place


def test_state_tensors_are_updated_in_place():
    got = sophia_state_storage([1.0, -1.0, 2.0])
    assert got["same_objects"] and got["same_storage"]  # the candidate's report
    assert float(np.abs(values(got["hessian"])).sum()) > 0
    assert _allclose(values(got["hessian"]), 0.01 * np.array([1.0, 1.0, 4.0]), rtol=1e-5, atol=1e-9)


def test_parameters_without_gradient_are_untouched_and_get_no_state():
    got = sophia_linear_run([{"params": [[1.0, 2.0], [3.0, -4.0]]}], {"lr": 0.1, "weight_decay": 0.3}, [step([[1.0, -1.0], None], 4)])["steps"][0]
    assert _array_equal(values(got["params"][1]), [3.0, -4.0])
    assert got["state"][1] is None and got["state"][0] is not None
    assert _allclose(values(got["params"][0]), np.array([1.0, 2.0]) * 0.97 - 0.1 * np.array([1.0, -1.0]), rtol=1e-6, atol=1e-8)


def test_sparse_gradients_raise():
    weights = lm_weights(9)
    x = torch.randint(0, 9, (2, 3), generator=torch.Generator().manual_seed(9))
    with _raises(RuntimeError) as raised:
        sophia_sparse_step(weights, x, torch.roll(x, -1, 1))
    assert raised.type is RuntimeError  # not a NotImplementedError, which is a RuntimeError too


def lm_batch(seed, b, t):
    x = torch.randint(0, 9, (b, t), generator=torch.Generator().manual_seed(seed))
    return x, torch.roll(x, -1, 1)


def test_parameters_are_changed_in_place():
    weights = lm_weights(2)
    x, y = lm_batch(2, 2, 4)
    got = sophia_lm_step(weights, {"lr": 0.01}, x, y, 8)
    assert got["same_objects"] and got["same_storage"] and got["parameters"]  # the candidate's report
    assert not all(_array_equal(values(p), values(weights[n])) for n, p in zip(got["names"], got["params"]))
    _, grads = lm_gradients(weights, x, y)
    for n, p in zip(got["names"], got["params"]):
        expected, _ = oracle_step(values(weights[n]), 0.0, 0.0, grads[n], 0.01, 0.965, 0.04, 0.1, 8)
        assert _allclose(values(p), expected, rtol=1e-5, atol=1e-6), n


def test_gradients_are_left_unchanged_by_step():
    weights = lm_weights(3)
    x, y = lm_batch(3, 2, 4)
    got = sophia_lm_step(weights, {"lr": 0.01, "maximize": True}, x, y, 8)
    assert all(_array_equal(values(a), values(b)) for a, b in zip(got["grads_after"], got["grads_before"]))
    _, grads = lm_gradients(weights, x, y)
    for n, g in zip(got["names"], got["grads_after"]):
        assert _allclose(values(g), grads[n], rtol=1e-6, atol=1e-8), n


def test_float64_parameters_match_the_oracle():
    w0 = [[0.3, -0.7], [1.1, 0.05]]
    gs = [np.array(g) for g in (([0.2, 0.4], [-0.3, 1e-3]), ([-0.1, 0.5], [0.2, -0.4]), ([0.3, -0.2], [0.1, 0.6]))]
    actions = [step([gs[0].tolist()], 30), hessian("keep"), step([gs[1].tolist()], 30), step([gs[2].tolist()], 30)]
    last = one_param(w0, actions, {"lr": 0.02, "betas": (0.7, 0.6), "rho": 0.03, "weight_decay": 0.5}, dtype="float64")[-1]
    ew, m, h = np.array(w0), np.zeros((2, 2)), np.zeros((2, 2))
    for k, g in enumerate(gs):
        ew, m = oracle_step(ew, m, h, g, 0.02, 0.7, 0.03, 0.5, 30)
        if k == 0:
            h = oracle_hessian(h, g, 0.6)
    assert last["params"][0].dtype == torch.float64
    assert _allclose(values(last["params"][0]), ew, rtol=1e-12, atol=1e-14)
    assert _allclose(values(last["state"][0]["exp_avg"]), m, rtol=1e-12, atol=1e-14)


def test_a_zero_learning_rate_keeps_the_weights():
    st = one_param([0.5, -0.5], [step([[1.0, 2.0]], 4)], {"lr": 0.0, "betas": (0.5, 0.5), "weight_decay": 0.3})[0]
    assert _array_equal(values(st["params"][0]), [0.5, -0.5])
    assert _allclose(values(st["state"][0]["exp_avg"]), [0.5, 1.0], rtol=1e-6)
    assert float(st["state"][0]["step"]) == 1.0


def test_each_group_uses_its_own_hyperparameters():
    groups = [{"params": [[1.0, 1.0]], "lr": 0.1, "weight_decay": 1.0}, {"params": [[1.0, 1.0]]}]
    got = sophia_linear_run(groups, {"lr": 0.01, "weight_decay": 0.0}, [step([[1.0, -1.0], [1.0, -1.0]], 4)])["steps"][0]
    assert _allclose(values(got["params"][0]), np.array([0.9, 0.9]) - 0.1 * np.array([1.0, -1.0]), rtol=1e-6)
    assert _allclose(values(got["params"][1]), np.array([1.0, 1.0]) - 0.01 * np.array([1.0, -1.0]), rtol=1e-6)


def test_hyperparameters_are_left_unchanged():
    groups = [{"params": [[1.0] * 3], "lr": 0.05, "rho": 0.1}, {"params": [[1.0] * 2], "betas": (0.7, 0.8)}]
    got = sophia_linear_run(groups, {"lr": 0.01}, [hessian([[1.0] * 3, [-1.0] * 2]), step("keep", 16)])
    assert got["groups"] == [(0.05, (0.965, 0.99), 0.1, 0.1, False, False), (0.01, (0.7, 0.8), 0.04, 0.1, False, False)]
    assert got["defaults"] == {"lr": 0.01, "betas": (0.965, 0.99), "rho": 0.04, "weight_decay": 0.1, "maximize": False, "capturable": False}


# ------------------------------------------------------------------ the closure


def test_step_returns_what_the_closure_returns():
    weights = lm_weights(4)
    x, y = lm_batch(4, 2, 4)
    got = sophia_closure_step(weights, {"lr": 0.01}, x, y, None, 8)
    assert got["is_closure_value"]  # the candidate's report: step returned the closure's very object
    loss, _ = lm_gradients(weights, x, y)
    assert isinstance(got["result"], torch.Tensor)
    assert abs(float(got["result"]) - loss) <= 1e-6 * max(1.0, abs(loss))


def test_the_closure_runs_once_with_gradients_enabled():
    got = sophia_closure_calls([1.0, -1.0, 2.0])
    assert got["seen"] == [True]
    # the step used the closure's gradient (no curvature yet: every coordinate clipped)
    assert _allclose(values(got["w"]), np.array([1.0, 1.0, 1.0]) * (1 - 0.01 * 0.1) - 0.01 * np.array([1.0, -1.0, 1.0]), rtol=1e-6, atol=1e-8)


def test_the_update_uses_the_gradients_the_closure_leaves():
    weights = lm_weights(5)
    x, y = lm_batch(5, 3, 4)
    got = sophia_closure_step(weights, {"lr": 0.01}, x, y, x.flip(0), 12)  # a stale gradient that the closure replaces
    for n, pa in got["with_closure"].items():
        assert _allclose(values(pa), values(got["without_closure"][n]), rtol=0, atol=1e-7), n
    _, grads = lm_gradients(weights, x, y)
    for n, pa in got["with_closure"].items():
        expected, _ = oracle_step(values(weights[n]), 0.0, 0.0, grads[n], 0.01, 0.965, 0.04, 0.1, 12)
        assert _allclose(values(pa), expected, rtol=1e-5, atol=1e-6), n


def test_step_without_closure_returns_none():
    got = one_param([1.0, 1.0], [step([[1.0, 2.0]], 4)], {"lr": 0.01})[0]
    assert got["returned"] is None


# ------------------------------------------------------------------ the helper on its own


def helper_inputs(dtype=torch.float32):
    gen = torch.Generator().manual_seed(6)
    params = [torch.randn(3, 2, generator=gen, dtype=dtype), torch.randn(4, generator=gen, dtype=dtype)]
    grads = [torch.randn(3, 2, generator=gen, dtype=dtype), torch.randn(4, generator=gen, dtype=dtype)]
    exp_avgs = [0.1 * torch.randn(3, 2, generator=gen, dtype=dtype), 0.1 * torch.randn(4, generator=gen, dtype=dtype)]
    hessian = [torch.rand(3, 2, generator=gen, dtype=dtype), torch.rand(4, generator=gen, dtype=dtype)]
    steps = [torch.tensor(5.0), torch.tensor(2.0)]
    return params, grads, exp_avgs, hessian, steps


HELPER_OPTIONS = dict(bs=12, beta1=0.8, beta2=0.95, rho=0.05, lr=0.03, weight_decay=0.4, maximize=False, capturable=False)


def test_the_helper_applies_the_update_to_each_parameter():
    params, grads, exp_avgs, hessian, steps = helper_inputs()
    expected = [
        oracle_step(values(p), values(m), values(h), values(g), 0.03, 0.8, 0.05, 0.4, 12)
        for p, g, m, h in zip(params, grads, exp_avgs, hessian)
    ]
    got = sophia_helper(params, grads, exp_avgs, hessian, steps, HELPER_OPTIONS)
    assert got["out"] is None
    for p, m, (ew, em) in zip(got["params"], got["exp_avgs"], expected):
        assert _allclose(values(p), ew, rtol=1e-5, atol=1e-7)
        assert _allclose(values(m), em, rtol=1e-5, atol=1e-8)
    assert got["steps"] == [6.0, 3.0]


def test_the_helper_reads_but_does_not_change_hessian_and_gradients():
    params, grads, exp_avgs, hessian, steps = helper_inputs()
    got = sophia_helper(params, grads, exp_avgs, hessian, steps, HELPER_OPTIONS)
    assert all(_array_equal(values(g), values(e)) for g, e in zip(got["grads"], grads))
    assert all(_array_equal(values(h), values(e)) for h, e in zip(got["hessian"], hessian))
