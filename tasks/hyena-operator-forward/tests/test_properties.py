"""Property tests for `HyenaOperator.forward` (standalone_hyena.py).

Each test checks one property that follows from the paper's definition of the order-N Hyena
operator (Section 3) and the contract in the instruction, on small operators built the way
the upstream builds them. The oracle below is written from the definition: the projections
and the causal short filter, a long convolution computed directly as a sum over past
positions (no FFT), the gates taken in the order the contract states, in float64.

The operator runs in the candidate process (lmr_bridge): the probes below build it there
with the upstream constructor and then load every parameter and buffer from a state this
file chose (`make_state`: weights as training leaves them, not as initialised), so the
oracle knows every number the forward pass uses. The implicit long filter (HyenaFilter.filter,
complete in the workspace) is written here too (`implicit_filter`), from the same state.
"""
import math

import pytest
import torch
import torch.nn.functional as F
from lmr_bridge import probe, probe_helper

# float32 forward (FFT or direct) against the float64 direct oracle
ATOL = 2e-5
RTOL = 2e-4


def make_state(d_model=8, l_max=24, order=2, filter_order=16, seed=0, emb_dim=3, w=1,
               fast_decay_pct=0.3, slow_decay_pct=1.5, target=1e-2, perturb=True, **_):
    """Every parameter and buffer of HyenaOperator(d_model, l_max, order, filter_order, ...),
    by state_dict name: drawn as the constructor draws them (seeded here), the positional
    embedding and the modulation's decay rates as the constructor computes them, and then
    every parameter moved by 0.2 * N(0, 1), as training leaves them."""
    torch.manual_seed(seed)
    d, n, fo, e = d_model, order, filter_order, emb_dim
    inner, filters = d * (n + 1), d * (n - 1)

    def linear(fan_in, fan_out, bias=True):
        layer = torch.nn.Linear(fan_in, fan_out, bias=bias)
        return [layer.weight.detach().clone()] + ([layer.bias.detach().clone()] if bias else [])

    in_w, in_b = linear(d, inner)
    out_w, out_b = linear(d, d)
    conv = torch.nn.Conv1d(inner, inner, 3, padding=2, groups=inner)
    filter_bias = torch.randn(filters)
    # PositionalEmbedding(emb_dim, l_max): time, then the real and imaginary parts of
    # complex exponentials
    t = torch.linspace(0, 1, l_max)[None, :, None]
    bands = (e - 1) // 2
    t_rescaled = torch.linspace(0, l_max - 1, l_max)[None, :, None]
    f = torch.linspace(1e-4, bands - 1, bands)[None, None]
    z = torch.exp(-1j * f * (2 * math.pi * t_rescaled / l_max))
    z = torch.cat([t, z.real, z.imag], dim=-1)
    mlp = [linear(e, fo), linear(fo, fo), linear(fo, fo), linear(fo, filters, bias=False)]
    freq = w * torch.ones(1, fo)
    deltas = torch.linspace(math.log(target) / slow_decay_pct, math.log(target) / fast_decay_pct, filters)[None, None]

    params = {
        "in_proj.weight": in_w, "in_proj.bias": in_b,
        "out_proj.weight": out_w, "out_proj.bias": out_b,
        "short_filter.weight": conv.weight.detach().clone(), "short_filter.bias": conv.bias.detach().clone(),
        "filter_fn.bias": filter_bias,
        "filter_fn.pos_emb.z": z,
        "filter_fn.implicit_filter.0.weight": mlp[0][0], "filter_fn.implicit_filter.0.bias": mlp[0][1],
        "filter_fn.implicit_filter.1.freq": freq,
        "filter_fn.implicit_filter.2.weight": mlp[1][0], "filter_fn.implicit_filter.2.bias": mlp[1][1],
        "filter_fn.implicit_filter.4.weight": mlp[2][0], "filter_fn.implicit_filter.4.bias": mlp[2][1],
        "filter_fn.implicit_filter.6.weight": mlp[3][0],
    }
    if perturb:
        params = {k: v + 0.2 * torch.randn_like(v) for k, v in params.items()}
    state = dict(params)
    # the one Sin activation sits at 1, 3 and 5 of implicit_filter: one frequency
    state["filter_fn.implicit_filter.3.freq"] = state["filter_fn.implicit_filter.1.freq"]
    state["filter_fn.implicit_filter.5.freq"] = state["filter_fn.implicit_filter.1.freq"]
    state["filter_fn.pos_emb.t"] = t  # buffers (the constructor registers them with lr 0)
    state["filter_fn.modulation.deltas"] = deltas
    return state


def without_biases(state):
    """The state with the biases of in_proj, short_filter and out_proj at zero."""
    state = dict(state)
    for k in ("in_proj.bias", "short_filter.bias", "out_proj.bias"):
        state[k] = torch.zeros_like(state[k])
    return state


def inputs(b, l, d, seed=1, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(b, l, d, generator=g, dtype=dtype)


def implicit_filter(state, length, modulate=True, shift=0.0):
    """HyenaFilter.filter(length) from the state, in float64: (length, d_model * (order - 1))."""
    s = {k: v.double() for k, v in state.items()}
    z, t = s["filter_fn.pos_emb.z"][:, :length], s["filter_fn.pos_emb.t"][:, :length]
    freq = s["filter_fn.implicit_filter.1.freq"]
    h = z
    for i in (0, 2, 4):
        h = torch.sin(freq * F.linear(h, s["filter_fn.implicit_filter.%d.weight" % i], s["filter_fn.implicit_filter.%d.bias" % i]))
    h = F.linear(h, s["filter_fn.implicit_filter.6.weight"])
    if modulate:
        h = h * (torch.exp(-t * s["filter_fn.modulation.deltas"].abs()) + shift)
    return h[0]


def direct_causal_conv(v, h, skip):
    """v (B, D, L), h (D, L) filter taps, skip (D,): sum_{s<=t} h[:, t-s] v[:, s] + skip v[:, t]."""
    length = v.shape[-1]
    t = torch.arange(length)
    lag = t[:, None] - t[None, :]  # (t, s)
    toeplitz = h[:, lag.clamp(min=0)] * (lag >= 0)  # (D, t, s)
    return torch.einsum("dts,bds->bdt", toeplitz, v) + skip[None, :, None] * v


def oracle(state, u, d, n, modulate=True, shift=0.0):
    """The operator's output computed from the state by the definition, in float64."""
    with torch.no_grad():
        s = {k: v.double() for k, v in state.items()}
        u = u.double()
        length = u.shape[1]
        z = F.linear(u, s["in_proj.weight"], s["in_proj.bias"]).transpose(1, 2)
        # depthwise short filter of width 3, causal: position t sees t-2, t-1, t
        w = s["short_filter.weight"][:, 0, :]  # (C, 3)
        zp = F.pad(z, (2, 0))
        z = (w[None, :, 0, None] * zp[..., :length] + w[None, :, 1, None] * zp[..., 1:length + 1]
             + w[None, :, 2, None] * zp[..., 2:] + s["short_filter.bias"][None, :, None])
        chunks = [z[:, i * d:(i + 1) * d] for i in range(n + 1)]
        gates, v = chunks[:n], chunks[n]
        h = implicit_filter(state, length, modulate, shift)  # (L, (n-1) d)
        skip = s["filter_fn.bias"]
        for o in range(n - 1):
            v = v * gates[n - 1 - o]
            v = direct_causal_conv(v, h[:, o * d:(o + 1) * d].T, skip[o * d:(o + 1) * d])
        y = (v * gates[0]).transpose(1, 2)
        return F.linear(y, s["out_proj.weight"], s["out_proj.bias"])


# ------------------------------------------------------------------ probes (run in the candidate)


@probe_helper
def build(config, state, dtype, mode):
    """In the candidate: HyenaOperator(**config) in `dtype` and `mode`, holding `state`."""
    from standalone_hyena import HyenaOperator

    op = HyenaOperator(**config).to(getattr(torch, dtype))
    op.load_state_dict(state)
    return op.train() if mode == "train" else op.eval()


@probe
def outputs(config, state, us, dtype="float32", mode="train", seed=None):
    """The operator's output for each input of `us` (torch seeded with `seed` first, when given)."""
    op = build(config, state, dtype, mode)
    if seed is not None:
        torch.manual_seed(seed)
    return [op(u).detach() for u in us]


@probe
def input_gradient(config, state, u, position):
    """d (sum of the output at `position` of batch element 0) / d u."""
    op = build(config, state, "float32", "train")
    u = u.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(op(u)[0, position].sum(), u)
    return grad


@probe
def parameters_without_gradient(config, state, u):
    op = build(config, state, "float32", "train")
    op(u).pow(2).sum().backward()
    return [name for name, p in op.named_parameters() if p.grad is None or p.grad.abs().sum() == 0]


@probe
def input_after_forward(config, state, u):
    op = build(config, state, "float32", "train")
    op(u)
    return u


def config_of(d_model=8, l_max=24, order=2, filter_order=16, **kw):
    kw.pop("seed", None)
    kw.pop("perturb", None)
    return dict(d_model=d_model, l_max=l_max, order=order, filter_order=filter_order, **kw)


def operator(**kw):
    """(constructor arguments, state) of one test operator; kw as make_state takes them."""
    return config_of(**kw), make_state(**kw)


@pytest.mark.parametrize("order,d_model,l_max,length,batch", [
    (2, 8, 24, 24, 2), (2, 8, 24, 7, 3), (3, 8, 32, 32, 2), (4, 4, 16, 11, 2), (2, 8, 16, 1, 2),
])
def test_output_shape_and_dtype_match_input(order, d_model, l_max, length, batch):
    config, state = operator(d_model=d_model, l_max=l_max, order=order, filter_order=8)
    (y,) = outputs(config, state, [inputs(batch, length, d_model)])
    assert isinstance(y, torch.Tensor)
    assert y.shape == (batch, length, d_model)
    assert y.dtype == torch.float32


def test_float64_module_returns_float64():
    config, state = operator(d_model=6, l_max=16, order=3, filter_order=8)
    (y,) = outputs(config, state, [inputs(2, 16, 6, dtype=torch.float64)], "float64")
    assert y.dtype == torch.float64 and y.shape == (2, 16, 6)


@pytest.mark.parametrize("order,d_model,l_max,length,seed", [
    (2, 8, 24, 24, 3), (2, 8, 32, 13, 4), (3, 8, 24, 24, 5), (3, 6, 20, 9, 6), (4, 4, 16, 16, 7),
])
def test_matches_direct_convolution_oracle(order, d_model, l_max, length, seed):
    config, state = operator(d_model=d_model, l_max=l_max, order=order, filter_order=8, seed=seed)
    u = inputs(2, length, d_model, seed=seed)
    (y,) = outputs(config, state, [u])
    torch.testing.assert_close(y.double(), oracle(state, u, d_model, order), atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("settings", [
    {"emb_dim": 5, "w": 10, "modulate": False},
    {"shift": 0.5, "fast_decay_pct": 0.5},
], ids=["emb5-w10-unmodulated", "shift-fast-decay"])
def test_matches_the_oracle_with_other_filter_settings(settings):
    # in float64: a frequency of 10 in the filter's sine makes float32 rounding visible
    config, state = operator(d_model=8, l_max=32, order=3, filter_order=16, seed=9, **settings)
    state = {k: v.double() for k, v in state.items()}
    u = inputs(2, 27, 8, seed=9, dtype=torch.float64)
    (y,) = outputs(config, state, [u], "float64")
    expected = oracle(state, u, 8, 3, settings.get("modulate", True), settings.get("shift", 0.0))
    torch.testing.assert_close(y, expected, atol=1e-10, rtol=1e-9)


def test_float64_matches_oracle_tightly():
    config, state = operator(d_model=6, l_max=20, order=3, filter_order=8, seed=8)
    state = {k: v.double() for k, v in state.items()}
    u = inputs(2, 20, 6, seed=8, dtype=torch.float64)
    (y,) = outputs(config, state, [u], "float64")
    torch.testing.assert_close(y, oracle(state, u, 6, 3), atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("order", [2, 3])
def test_causal_future_inputs_do_not_change_past_outputs(order):
    config, state = operator(d_model=8, l_max=32, order=order, seed=10 + order)
    u = inputs(2, 32, 8, seed=11)
    g = torch.Generator().manual_seed(12)
    times = (0, 5, 17, 30)
    changed = []
    for t in times:
        w = u.clone()
        w[:, t + 1:] += 3.0 * torch.randn(w[:, t + 1:].shape, generator=g)
        changed.append(w)
    y, *ys = outputs(config, state, [u] + changed)
    torch.testing.assert_close(y.double(), oracle(state, u, 8, order), atol=ATOL, rtol=RTOL)
    for t, yw in zip(times, ys):
        torch.testing.assert_close(yw[:, :t + 1], y[:, :t + 1], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("order", [2, 3])
def test_output_depends_on_the_distant_past(order):
    # a long convolution: the last position sees the first one (a short filter alone cannot)
    config, state = operator(d_model=8, l_max=32, order=order, seed=20 + order)
    grad = input_gradient(config, state, inputs(1, 32, 8, seed=21), 31)
    assert grad[0, 0].abs().sum() > 1e-6
    assert grad[0, 31].abs().sum() > 1e-6


def test_prefix_of_a_sequence_gives_prefix_of_the_output():
    config, state = operator(d_model=8, l_max=32, order=3, seed=30)
    u = inputs(2, 32, 8, seed=31)
    short, full = outputs(config, state, [u[:, :12], u])
    torch.testing.assert_close(short, full[:, :12], atol=1e-5, rtol=1e-4)


def test_batch_elements_are_independent():
    config, state = operator(d_model=8, l_max=24, order=3, seed=40)
    u = inputs(3, 24, 8, seed=41)
    y, *singles = outputs(config, state, [u] + [u[i:i + 1] for i in range(3)])
    for i in range(3):
        torch.testing.assert_close(singles[i], y[i:i + 1], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("order", [2, 3, 4])
def test_order_n_without_biases_is_homogeneous_of_degree_n_plus_one(order):
    # order N: N gates and one value, each linear in u once the biases are zero, so scaling
    # the input by c scales the output by c ** (N + 1)
    config, state = operator(d_model=4, l_max=16, order=order, filter_order=8, seed=50 + order)
    state = {k: v.double() for k, v in without_biases(state).items()}
    u = inputs(2, 16, 4, seed=51, dtype=torch.float64)
    c = 1.7
    scaled, plain = outputs(config, state, [c * u, u], "float64")
    torch.testing.assert_close(scaled, c ** (order + 1) * plain, atol=1e-9, rtol=1e-8)


def test_every_parameter_receives_a_gradient():
    config, state = operator(d_model=8, l_max=16, order=3, filter_order=8, seed=60)
    assert parameters_without_gradient(config, state, inputs(2, 16, 8, seed=61)) == []


def test_input_is_not_modified():
    config, state = operator(d_model=8, l_max=16, order=3, seed=70)
    u = inputs(2, 16, 8, seed=71)
    assert torch.equal(input_after_forward(config, state, u), u)


def test_dropout_is_inactive_in_eval_mode():
    config, state = operator(d_model=8, l_max=16, order=3, seed=80, dropout=0.5)
    u = inputs(2, 16, 8, seed=81)
    (y,) = outputs(config, state, [u], mode="eval")
    torch.testing.assert_close(y.double(), oracle(state, u, 8, 3), atol=ATOL, rtol=RTOL)


def test_dropout_is_applied_in_training_mode():
    config, state = operator(d_model=8, l_max=16, order=3, seed=90, dropout=0.5)
    u = inputs(2, 16, 8, seed=91)
    (y,) = outputs(config, state, [u], mode="train", seed=0)
    assert not torch.allclose(y.double(), oracle(state, u, 8, 3), atol=1e-3, rtol=1e-3)
