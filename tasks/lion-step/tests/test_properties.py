"""Property tests for Lion.step (lion/lion_pytorch.py), written from the paper.

Every gradient here comes from a backward pass, as in training: a linear loss
(coefficients . w) gives the gradient `coefficients` exactly, a small network gives
realistic ones. The oracle below is Algorithm 2 of the paper in float64 numpy, written from
the paper's definition: direction = sign(beta1 * m + (1 - beta1) * g),
w <- w - lr * (direction + lambda * w), m <- beta2 * m + (1 - beta2) * g.

The optimizer runs in the candidate process (lmr_bridge): the probes below build it there
from weights, coefficients and batches this file chose, step it, and return plain data
(values, state, flags). Every expected value is computed here, from those same inputs: the
network's gradients too, by a copy of the network in this process.
"""
import numpy as np
import torch
from torch import nn
from lmr_bridge import probe, probe_helper

_allclose = np.allclose
_array_equal = np.array_equal


def values(t):
    return np.array(t.detach().cpu().numpy(), dtype=np.float64, copy=True)


def oracle_step(w, m, g, lr, betas, wd):
    beta1, beta2 = betas
    direction = np.sign(beta1 * m + (1.0 - beta1) * g)
    return w - lr * (direction + wd * w), beta2 * m + (1.0 - beta2) * g


@probe_helper
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 3)
        self.fc1 = nn.Linear(3, 5)
        self.fc2 = nn.Linear(5, 2)

    def forward(self, tokens):
        return self.fc2(torch.tanh(self.fc1(self.embed(tokens).mean(dim=1))))


def net_weights(seed):
    """Initial weights of a Net, chosen here (the probes load them)."""
    torch.manual_seed(seed)
    return {k: v.detach().clone() for k, v in Net().state_dict().items()}


def net_gradients(weights, tokens, labels):
    """The cross-entropy gradients of a Net with these weights, computed here: (loss, {name: array})."""
    net = Net()
    net.load_state_dict(weights)
    loss = nn.functional.cross_entropy(net(tokens), labels)
    loss.backward()
    return float(loss), {k: values(p.grad) for k, p in net.named_parameters()}


def random_batch(gen, n, seq, vocab_used):
    return torch.randint(0, vocab_used, (n, seq), generator=gen), torch.randint(0, 2, (n,), generator=gen)


# ------------------------------------------------------------------ probes (run in the candidate)


@probe_helper
def linear_backward(params, coefficients):
    """Sets each parameter's .grad to its coefficient tensor through a backward pass
    (a coefficient None leaves that parameter out of the loss)."""
    loss = sum((p * c).sum() for p, c in zip(params, coefficients) if c is not None)
    loss.backward()
    return loss


@probe
def lion_linear_run(groups, options, steps, dtype="float32"):
    """Lion over parameters built from `groups` ([{"params": [values...], hyperparameters...}]),
    with Lion(..., **options). Each step: `clear` ("none": every .grad set to None;
    "zero": optimizer.zero_grad(set_to_none=False)), then a linear loss with `grads` (one
    coefficient or None per parameter, in order), then step(). After each step: the
    parameters, each parameter's state (None without an entry) and what step returned."""
    import torch
    from torch import nn
    from lion.lion_pytorch import Lion

    torch_dtype = getattr(torch, dtype)
    params, specs = [], []
    for group in groups:
        ps = [nn.Parameter(torch.tensor(v, dtype=torch_dtype)) for v in group["params"]]
        params.extend(ps)
        specs.append(dict(group, params=ps))
    opt = Lion(specs, **options)
    seen = []
    for step in steps:
        if step.get("clear", "none") == "zero":
            opt.zero_grad(set_to_none=False)
        else:
            for p in params:
                p.grad = None
        coefficients = [None if c is None else torch.tensor(c, dtype=torch_dtype) for c in step["grads"]]
        if any(c is not None for c in coefficients):
            linear_backward(params, coefficients)
        had_grad = [p.grad is not None for p in params]
        returned = opt.step()
        seen.append({
            "had_grad": had_grad,
            "params": [p.detach().clone() for p in params],
            "state": [None if p not in opt.state else {k: (v.detach().clone() if torch.is_tensor(v) else v) for k, v in opt.state[p].items()} for p in params],
            "returned": returned,
        })
    return {
        "steps": seen,
        "groups": [(g["lr"], tuple(g["betas"]), g["weight_decay"]) for g in opt.param_groups],
        "defaults": dict(opt.defaults),
    }


@probe
def lion_net_training(weights, groups, options, batches):
    """A Net with `weights`, Lion over parameter groups (`groups`: lists of parameter names
    with their hyperparameters), one step per batch; after each step the parameters and the
    momenta, by name."""
    from lion.lion_pytorch import Lion

    net = Net()
    net.load_state_dict(weights)
    named = dict(net.named_parameters())
    opt = Lion([dict(g, params=[named[n] for n in g["params"]]) for g in groups], **options)
    seen = []
    for tokens, labels in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(net(tokens), labels).backward()
        opt.step()
        seen.append({
            "params": {n: p.detach().clone() for n, p in named.items()},
            "exp_avg": {n: opt.state[p]["exp_avg"].detach().clone() for n, p in named.items()},
        })
    return seen


@probe
def lion_net_step(weights, options, tokens, labels):
    """One step of Lion on a Net with `weights` after a backward pass on (tokens, labels):
    what an in-place update must keep (identity, storage, Parameter-ness, the gradients)."""
    from lion.lion_pytorch import Lion

    net = Net()
    net.load_state_dict(weights)
    opt = Lion(net.parameters(), **options)
    nn.functional.cross_entropy(net(tokens), labels).backward()
    params = [p for g in opt.param_groups for p in g["params"]]
    pointers = [p.data_ptr() for p in params]
    grads_before = [p.grad.detach().clone() for p in params]
    opt.step()
    after = [p for g in opt.param_groups for p in g["params"]]
    return {
        "names": [n for n, _ in net.named_parameters()],
        "same_objects": len(params) == len(after) and all(x is y for x, y in zip(params, after)),
        "same_storage": [p.data_ptr() for p in params] == pointers,
        "parameters": all(isinstance(p, nn.Parameter) and p.requires_grad and p.grad_fn is None for p in params),
        "params": [p.detach().clone() for p in params],
        "grads_before": grads_before,
        "grads_after": [p.grad.detach().clone() for p in params],
    }


@probe
def lion_closure_step(weights, options, tokens, labels, stale_tokens):
    """step(closure) on a Net with `weights`; a stale gradient (from stale_tokens) is in .grad
    before, which the closure replaces. The same step without closure on a twin Net."""
    from lion.lion_pytorch import Lion

    a, b = Net(), Net()
    a.load_state_dict(weights)
    b.load_state_dict(weights)
    opt_a, opt_b = Lion(a.parameters(), **options), Lion(b.parameters(), **options)
    if stale_tokens is not None:
        nn.functional.cross_entropy(a(stale_tokens), labels).backward()
    returned, grad_enabled = [], []

    def closure():
        grad_enabled.append(torch.is_grad_enabled())
        opt_a.zero_grad()
        loss = nn.functional.cross_entropy(a(tokens), labels)
        loss.backward()
        returned.append(loss)
        return loss

    result = opt_a.step(closure)
    opt_b.zero_grad()
    nn.functional.cross_entropy(b(tokens), labels).backward()
    opt_b.step()
    return {
        "is_closure_value": len(returned) == 1 and result is returned[0],
        "result": result.detach().clone() if torch.is_tensor(result) else result,
        "grad_enabled": grad_enabled,
        "with_closure": {n: p.detach().clone() for n, p in a.named_parameters()},
        "without_closure": {n: p.detach().clone() for n, p in b.named_parameters()},
    }


@probe
def lion_closure_calls(start, coefficients, lr):
    """step(closure) on one parameter: the closure's calls and whether gradients were enabled."""
    from lion.lion_pytorch import Lion

    w = nn.Parameter(torch.tensor(start))
    opt = Lion([w], lr=lr)
    seen = []

    def closure():
        seen.append(torch.is_grad_enabled())
        opt.zero_grad()
        loss = (w * torch.tensor(coefficients)).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return {"seen": seen, "w": w.detach().clone()}


@probe
def lion_quadratic(target, lr, betas, steps):
    from lion.lion_pytorch import Lion

    target = torch.tensor(target)
    w = nn.Parameter(torch.zeros(len(target)))
    opt = Lion([w], lr=lr, betas=betas)
    for _ in range(steps):
        opt.zero_grad()
        ((w - target) ** 2).sum().backward()
        opt.step()
    return w.detach().clone()


def one_param(w0, grads, options, steps_clear=None, dtype="float32"):
    """lion_linear_run on a single parameter: the list of per-step snapshots."""
    steps = [{"grads": [g], "clear": (steps_clear or {}).get(i, "none")} for i, g in enumerate(grads)]
    return lion_linear_run([{"params": [w0]}], options, steps, dtype)["steps"]


def grid(gen, *shape):
    return torch.randn(*shape, generator=gen).tolist()


# ------------------------------------------------------------------ the whole loop


def test_training_matches_an_oracle_of_algorithm_2():
    weights = net_weights(0)
    gen = torch.Generator().manual_seed(0)
    batches = [random_batch(gen, 4, 3, 7) for _ in range(6)]
    groups = [
        {"params": ["fc1.weight", "fc2.weight"], "weight_decay": 0.5, "lr": 0.02},
        {"params": ["embed.weight", "fc1.bias", "fc2.bias"]},
    ]
    options = {"lr": 0.005, "betas": (0.8, 0.97), "weight_decay": 0.0}
    got = lion_net_training(weights, groups, options, batches)
    assert len(got) == len(batches)

    # the oracle trains its own copy: float64 weights and momenta, float32 gradients of a Net
    # holding those weights (as the candidate's Net holds its float32 ones)
    hyper = {}
    for g in groups:
        for n in g["params"]:
            hyper[n] = (g.get("lr", options["lr"]), g.get("betas", options["betas"]), g.get("weight_decay", options["weight_decay"]))
    w = {n: values(t) for n, t in weights.items()}
    m = {n: np.zeros_like(v) for n, v in w.items()}
    for (tokens, labels), step in zip(batches, got):
        _, grads = net_gradients({n: torch.tensor(v, dtype=torch.float32) for n, v in w.items()}, tokens, labels)
        for n in w:
            lr, betas, wd = hyper[n]
            interpolation = betas[0] * m[n] + (1.0 - betas[0]) * grads[n]
            # the check is well posed: no sign here is decided by rounding (exact zeros are
            # unused embedding rows, zero in both processes)
            assert np.all((interpolation == 0) | (np.abs(interpolation) > 1e-6)), n
            w[n], m[n] = oracle_step(w[n], m[n], grads[n], lr, betas, wd)
            assert _allclose(values(step["params"][n]), w[n], rtol=1e-5, atol=1e-6), n
            assert _allclose(values(step["exp_avg"][n]), m[n], rtol=1e-5, atol=1e-7), n


# ------------------------------------------------------------------ the update rule


def test_every_coordinate_moves_by_exactly_the_learning_rate_without_weight_decay():
    gen = torch.Generator().manual_seed(1)
    w0, g = grid(gen, 4, 6), grid(gen, 4, 6)
    after = one_param(w0, [g], {"lr": 0.03})[0]["params"][0]
    assert _allclose(np.abs(values(after) - np.array(w0, dtype=np.float32)), 0.03, rtol=1e-4, atol=1e-6)
    assert _allclose(values(after), np.array(w0, dtype=np.float32) - 0.03 * np.sign(g), rtol=1e-4, atol=1e-6)


def test_a_zero_direction_moves_only_by_the_weight_decay():
    # first step: zero momentum; the second row has a zero gradient (an unused embedding row)
    w0 = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
    after = one_param(w0, [[[1.0, -2.0, 0.5], [0.0, 0.0, 0.0]]], {"lr": 0.1, "weight_decay": 0.5})[0]["params"][0]
    assert _allclose(values(after)[1], np.array([1.5, 0.25, -0.75]) * (1 - 0.1 * 0.5), rtol=1e-6, atol=1e-7)


def test_weight_decay_does_not_enter_the_direction_or_the_momentum():
    # a large positive weight with a small negative gradient: coupled L2 (g + lambda * w)
    # would flip the direction; decoupled weight decay does not
    step = one_param([3.0, 5.0], [[-0.001, -0.002]], {"lr": 0.01, "betas": (0.9, 0.99), "weight_decay": 1.0})[0]
    assert _allclose(values(step["params"][0]), np.array([3.0, 5.0]) * (1 - 0.01) + 0.01, rtol=1e-6, atol=1e-7)
    assert _allclose(values(step["state"][0]["exp_avg"]), np.array([-0.001, -0.002]) * 0.01, rtol=1e-5, atol=1e-10)


def test_weight_decay_uses_the_weights_before_the_step():
    # decaying the already-updated weights would differ by lr * lr * lambda = 0.02
    after = one_param([1.0, -1.0, 0.5], [[1.0, 1.0, -1.0]], {"lr": 0.1, "weight_decay": 2.0})[0]["params"][0]
    assert _allclose(values(after), np.array([1.0, -1.0, 0.5]) * (1 - 0.2) - 0.1 * np.array([1.0, 1.0, -1.0]), rtol=1e-6, atol=1e-7)


def test_direction_interpolates_the_old_momentum_with_beta1():
    a = [0.02, 0.05, 0.08, 0.1, 0.15, 0.3]
    steps = one_param([0.0] * 6, [[1.0] * 6, [-x for x in a]], {"lr": 0.01, "betas": (0.9, 0.99)})
    # after the first step the momentum is 0.01 everywhere; then
    # direction = sign(0.9 * 0.01 - 0.1 * a): positive while a < 0.09, negative above
    after_first, after_second = values(steps[0]["params"][0]), values(steps[1]["params"][0])
    expected_direction = np.sign(0.9 * 0.01 - 0.1 * np.array(a, dtype=np.float32).astype(np.float64))
    assert _array_equal(np.sign(after_first - after_second), expected_direction)
    assert _allclose(after_first, -0.01, rtol=1e-6, atol=1e-9)


def test_momentum_is_an_exponential_average_with_beta2():
    g = [1.0, -2.0, 0.5]
    last = one_param([0.0] * 3, [g] * 3, {"lr": 0.001, "betas": (0.9, 0.8)})[-1]
    assert _allclose(values(last["state"][0]["exp_avg"]), (1 - 0.8 ** 3) * np.array(g), rtol=1e-5, atol=1e-7)


def test_the_state_holds_only_the_momentum():
    gen = torch.Generator().manual_seed(7)
    state = one_param(grid(gen, 2, 3), [grid(gen, 2, 3)], {"lr": 0.01})[0]["state"][0]
    assert set(state) == {"exp_avg"}
    assert isinstance(state["exp_avg"], torch.Tensor)
    assert tuple(state["exp_avg"].shape) == (2, 3) and state["exp_avg"].dtype == torch.float32


def test_parameters_without_gradient_are_untouched_and_get_no_state():
    step = lion_linear_run([{"params": [[1.0, 2.0], [3.0, -4.0]]}], {"lr": 0.1, "weight_decay": 0.3}, [{"grads": [[1.0, -1.0], None]}])["steps"][0]
    assert step["had_grad"] == [True, False]
    assert _array_equal(values(step["params"][1]), np.array([3.0, -4.0]))
    assert step["state"][1] is None
    assert step["state"][0] is not None
    assert _allclose(values(step["params"][0]), np.array([1.0, 2.0]) * (1 - 0.03) - 0.1 * np.array([1.0, -1.0]), rtol=1e-6, atol=1e-7)


def test_a_zero_gradient_is_not_skipped():
    steps = one_param([1.0, 1.0], [[2.0, -2.0], None], {"lr": 0.1, "betas": (0.9, 0.99)}, steps_clear={1: "zero"})
    assert steps[1]["had_grad"] == [True]  # zero_grad(set_to_none=False): a gradient of zeros
    before = values(steps[0]["params"][0])
    assert _allclose(before, np.array([1.0, 1.0]) - 0.1 * np.array([1.0, -1.0]), rtol=1e-6, atol=1e-7)
    # the direction is the sign of 0.9 * momentum: the same as the first gradient's
    assert _allclose(values(steps[1]["params"][0]), before - 0.1 * np.array([1.0, -1.0]), rtol=1e-6, atol=1e-7)


def test_float64_parameters_stay_float64_and_match_the_oracle():
    w0 = [[0.3, -0.7], [1.1, 0.05]]
    g = np.array([[0.2, 0.4], [-0.3, 1e-3]])
    scales = (1.0, -0.5, 2.0)
    steps = one_param(w0, [(g * s).tolist() for s in scales], {"lr": 0.02, "betas": (0.5, 0.9), "weight_decay": 2.0}, dtype="float64")
    expected, m = np.array(w0), np.zeros((2, 2))
    for s in scales:
        expected, m = oracle_step(expected, m, g * s, 0.02, (0.5, 0.9), 2.0)
    w, exp_avg = steps[-1]["params"][0], steps[-1]["state"][0]["exp_avg"]
    assert w.dtype == torch.float64 and exp_avg.dtype == torch.float64
    assert _allclose(values(w), expected, rtol=1e-12, atol=1e-14)
    assert _allclose(values(exp_avg), m, rtol=1e-12, atol=1e-14)


def test_each_group_uses_its_own_learning_rate():
    g = [1.0, -1.0, 0.5, -3.0]
    step = lion_linear_run([{"params": [[0.0] * 4], "lr": 0.1}, {"params": [[0.0] * 4]}], {"lr": 0.001}, [{"grads": [g, g]}])["steps"][0]
    assert _allclose(values(step["params"][0]), -0.1 * np.sign(g), rtol=1e-6, atol=1e-8)
    assert _allclose(values(step["params"][1]), -0.001 * np.sign(g), rtol=1e-6, atol=1e-9)


def test_each_group_uses_its_own_weight_decay_and_betas():
    groups = [{"params": [[2.0, 2.0]], "weight_decay": 1.0, "betas": (0.5, 0.5)}, {"params": [[2.0, 2.0]]}]
    steps = lion_linear_run(groups, {"lr": 0.1}, [{"grads": [[0.0, 0.0], [0.0, 0.0]]}, {"grads": [[1.0, -1.0], [1.0, -1.0]]}])["steps"]
    assert _allclose(values(steps[0]["params"][0]), [1.8, 1.8], rtol=1e-6, atol=1e-7)
    assert _allclose(values(steps[0]["params"][1]), [2.0, 2.0], rtol=1e-6, atol=1e-7)
    assert _allclose(values(steps[1]["state"][0]["exp_avg"]), [0.5, -0.5], rtol=1e-6, atol=1e-8)
    assert _allclose(values(steps[1]["state"][1]["exp_avg"]), [0.01, -0.01], rtol=1e-5, atol=1e-9)


def test_a_zero_learning_rate_keeps_the_weights_and_moves_the_momentum():
    step = one_param([0.5, -0.5, 1.0], [[1.0, 2.0, -1.0]], {"lr": 0.0, "betas": (0.9, 0.9), "weight_decay": 3.0})[0]
    assert _array_equal(values(step["params"][0]), np.array([0.5, -0.5, 1.0], dtype=np.float32).astype(np.float64))
    assert _allclose(values(step["state"][0]["exp_avg"]), [0.1, 0.2, -0.1], rtol=1e-5, atol=1e-8)


def test_hyperparameters_are_left_unchanged():
    groups = [{"params": [[1.0] * 3], "lr": 0.05, "weight_decay": 0.1}, {"params": [[1.0] * 2], "betas": (0.7, 0.8)}]
    got = lion_linear_run(groups, {"lr": 0.01}, [{"grads": [[1.0] * 3, [-1.0] * 2]}])
    assert got["groups"] == [(0.05, (0.9, 0.99), 0.1), (0.01, (0.7, 0.8), 0.0)]
    assert got["defaults"] == {"lr": 0.01, "betas": (0.9, 0.99), "weight_decay": 0.0}


def test_lion_minimises_a_quadratic():
    target = torch.randn(8, generator=torch.Generator().manual_seed(5))
    w = lion_quadratic(target.tolist(), 0.01, (0.9, 0.99), 600)
    assert np.max(np.abs(values(w) - values(target))) < 0.05


# ------------------------------------------------------------------ the closure


def test_step_returns_what_the_closure_returns():
    weights = net_weights(2)
    gen = torch.Generator().manual_seed(2)
    tokens, labels = torch.randint(0, 10, (3, 4), generator=gen), torch.randint(0, 2, (3,), generator=gen)
    got = lion_closure_step(weights, {"lr": 0.01}, tokens, labels, None)
    assert got["is_closure_value"]  # the candidate's report: step returned the closure's very object
    loss, _ = net_gradients(weights, tokens, labels)
    assert isinstance(got["result"], torch.Tensor)
    assert abs(float(got["result"]) - loss) <= 1e-6 * max(1.0, abs(loss))


def test_the_closure_runs_once_with_gradients_enabled():
    got = lion_closure_calls([1.0, 1.0, 1.0], [1.0, -1.0, 2.0], 0.01)
    assert got["seen"] == [True]
    # the step used the closure's gradient
    assert _allclose(values(got["w"]), np.array([1.0, 1.0, 1.0]) - 0.01 * np.array([1.0, -1.0, 1.0]), rtol=1e-6, atol=1e-8)


def test_the_update_uses_the_gradients_the_closure_leaves():
    weights = net_weights(3)
    gen = torch.Generator().manual_seed(3)
    tokens, labels = torch.randint(0, 10, (5, 3), generator=gen), torch.randint(0, 2, (5,), generator=gen)
    # a stale gradient in the closure's optimizer: the closure replaces it before the update
    got = lion_closure_step(weights, {"lr": 0.01, "weight_decay": 0.1}, tokens, labels, tokens.flip(0))
    for name, pa in got["with_closure"].items():
        assert _allclose(values(pa), values(got["without_closure"][name]), rtol=0, atol=1e-7), name
    _, grads = net_gradients(weights, tokens, labels)
    for name, pa in got["with_closure"].items():
        expected, _ = oracle_step(values(weights[name]), 0.0, grads[name], 0.01, (0.9, 0.99), 0.1)
        assert _allclose(values(pa), expected, rtol=1e-5, atol=1e-6), name


def test_step_without_closure_returns_none():
    step = one_param([1.0, 1.0], [[1.0, 2.0]], {"lr": 0.01})[0]
    assert step["returned"] is None


# ------------------------------------------------------------------ in place


def stepped_net(seed):
    weights = net_weights(seed)
    gen = torch.Generator().manual_seed(seed)
    tokens, labels = torch.randint(0, 10, (4, 3), generator=gen), torch.randint(0, 2, (4,), generator=gen)
    return weights, tokens, labels, lion_net_step(weights, {"lr": 0.01, "weight_decay": 0.1}, tokens, labels)


def test_parameters_are_changed_in_place():
    weights, _, _, got = stepped_net(4)
    # the candidate's report of identity, storage and Parameter-ness
    assert got["same_objects"] and got["same_storage"] and got["parameters"]
    assert not all(_array_equal(values(p), values(weights[n])) for n, p in zip(got["names"], got["params"]))


def test_gradients_are_left_unchanged():
    weights, tokens, labels, got = stepped_net(6)
    assert all(_array_equal(values(a), values(b)) for a, b in zip(got["grads_after"], got["grads_before"]))
    _, grads = net_gradients(weights, tokens, labels)
    for n, g in zip(got["names"], got["grads_after"]):
        assert _allclose(values(g), grads[n], rtol=1e-6, atol=1e-8), n
