"""Property tests for MultiScaleSeasonMixing and MultiScaleTrendMixing (models/TimeMixer.py).

Written from the paper (Section 3, Past Decomposable Mixing: seasonal mixing bottom-up, from
fine to coarse scales; trend mixing top-down, from coarse to fine; each mixing step a
two-layer MLP with a GELU along the time axis, added as a residual) and from the contract in
the instruction. Inputs are what PastDecomposableMixing hands the two modules: one tensor
per scale, shape (batch, channels, T_i) with T_i = seq_len // window ** i, i = 0 .. layers.
Everything is seeded; sizes are tiny.

The modules run in the candidate process (lmr_bridge): the probes below build them there
(from configs as run.py gives them) and send back what they return as plain data. Where a
test needs the mixing's expected values, this file chooses the weights itself and the probe
loads them with load_state_dict(strict=True) (the parameter layout the instruction states),
so every expected value is computed here from weights and inputs this file made.
"""
import argparse
import math

import pytest
import torch
import torch.nn.functional as F
from lmr_bridge import probe, probe_helper

# (seq_len, window, layers): the scripts' setting, a window of 3, floors, one layer only
SETTINGS = [(16, 2, 3), (18, 3, 2), (15, 2, 2), (8, 2, 1), (12, 3, 2)]

SEASON, TREND = "MultiScaleSeasonMixing", "MultiScaleTrendMixing"
BOTH = [SEASON, TREND]
NAMES = {SEASON: "season", TREND: "trend"}


@probe_helper
def configs(seq_len, window, layers):
    return argparse.Namespace(
        seq_len=seq_len, pred_len=4, down_sampling_window=window, down_sampling_layers=layers,
        d_model=4, d_ff=8, dropout=0.0, channel_independence=1, decomp_method="moving_avg",
        moving_avg=5, top_k=2, e_layers=2, enc_in=3, c_out=3,
    )


@probe_helper
def make(cls_name, setting, dtype_name="float32", seed=0, state=None):
    """In the candidate: the class built from configs; then either the weights moved away
    from their initialisation (biases non-zero), or `state` loaded with strict=True."""
    import torch
    from models import TimeMixer

    torch.manual_seed(seed)
    module = getattr(TimeMixer, cls_name)(configs(*setting)).to(getattr(torch, dtype_name))
    if state is not None:
        module.load_state_dict(state, strict=True)
        return module
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module


@probe
def outputs_for(cls_name, setting, input_lists, dtype_name="float32", seed=0, state=None, zero=False):
    """In the candidate: one module, called on each list of scales in turn (a fresh list each time)."""
    import torch

    module = make(cls_name, setting, dtype_name, seed, state)
    if zero:
        with torch.no_grad():
            for p in module.parameters():
                p.zero_()
    return [module(list(xs)) for xs in input_lists]


@probe
def parameter_shapes(cls_name, setting):
    """In the candidate: the freshly built module's state_dict, entry -> shape."""
    from models import TimeMixer

    module = getattr(TimeMixer, cls_name)(configs(*setting))
    return {k: tuple(v.shape) for k, v in module.state_dict().items()}


@probe
def mixing_steps(cls_name, setting):
    """In the candidate: what the module's list of mixing steps is made of."""
    import torch
    from models import TimeMixer

    module = getattr(TimeMixer, cls_name)(configs(*setting))
    steps = module.down_sampling_layers if cls_name == "MultiScaleSeasonMixing" else module.up_sampling_layers
    return {
        "module_list": isinstance(steps, torch.nn.ModuleList),
        "count": len(steps),
        "steps": [
            {
                "sequential": isinstance(step, torch.nn.Sequential),
                "length": len(step),
                "linear_first": isinstance(step[0], torch.nn.Linear),
                "linear_last": isinstance(step[2], torch.nn.Linear),
                "gelu": isinstance(step[1], torch.nn.GELU),
                "approximate": getattr(step[1], "approximate", None),
            }
            for step in steps
        ],
    }


@probe
def input_list_after_the_call(cls_name, setting, xs):
    """In the candidate: whether the list handed to forward still holds the same tensors, and
    the tensors as the call left them."""
    module = make(cls_name, setting)
    given = list(xs)
    module(given)
    return {"same_list": len(given) == len(xs) and all(a is b for a, b in zip(given, xs)), "tensors": xs}


@probe
def gradients(cls_name, setting, xs):
    """In the candidate: backpropagate the sum of squared outputs; every parameter's and
    every input's gradient."""
    module = make(cls_name, setting)
    xs = [x.requires_grad_(True) for x in xs]
    out = module(list(xs))
    sum((o ** 2).sum() for o in out).backward()
    return {"parameters": {name: p.grad for name, p in module.named_parameters()}, "inputs": [x.grad for x in xs]}


@probe
def block_outputs(setting, state, xs):
    """In the candidate: the upstream's PastDecomposableMixing block (which builds both
    modules) with `state` loaded (strict), in eval mode, on `xs`."""
    import torch
    from models.TimeMixer import PastDecomposableMixing

    torch.manual_seed(12)
    block = PastDecomposableMixing(configs(*setting)).eval()
    block.load_state_dict(state, strict=True)
    with torch.no_grad():
        return block(xs)


def lengths(seq_len, window, layers):
    return [seq_len // window ** i for i in range(layers + 1)]


def scales(setting, batch=2, channels=3, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, channels, n, generator=g, dtype=dtype) for n in lengths(*setting)]


def expected_layout(cls_name, setting, prefix=""):
    """state_dict entry -> shape, as the instruction states it."""
    n = lengths(*setting)
    layers = setting[2]
    out = {}
    if cls_name == SEASON:
        for i in range(layers):
            a, b = n[i], n[i + 1]
            out.update({
                prefix + "down_sampling_layers.%d.0.weight" % i: (b, a), prefix + "down_sampling_layers.%d.0.bias" % i: (b,),
                prefix + "down_sampling_layers.%d.2.weight" % i: (b, b), prefix + "down_sampling_layers.%d.2.bias" % i: (b,),
            })
    else:
        for k in range(layers):
            a, b = n[layers - k], n[layers - k - 1]
            out.update({
                prefix + "up_sampling_layers.%d.0.weight" % k: (b, a), prefix + "up_sampling_layers.%d.0.bias" % k: (b,),
                prefix + "up_sampling_layers.%d.2.weight" % k: (b, b), prefix + "up_sampling_layers.%d.2.bias" % k: (b,),
            })
    return out


def random_state(layout, dtype, seed):
    """Weights for `layout` chosen here: a Linear's initial range plus a perturbation, as
    training leaves them (biases non-zero)."""
    g = torch.Generator().manual_seed(seed)
    state = {}
    for name, shape in layout.items():
        weight = layout[name[: -len("bias")] + "weight"] if name.endswith("bias") else shape
        bound = 1.0 / math.sqrt(weight[-1]) if len(weight) == 2 else 1.0
        values = (2.0 * torch.rand(shape, generator=g, dtype=torch.float64) - 1.0) * bound
        state[name] = (values + 0.3 * torch.randn(shape, generator=g, dtype=torch.float64)).to(dtype)
    return state


def mlp(state, prefix, x):
    """Linear, exact GELU, Linear over the last axis, with the weights of state[prefix.*]."""
    h = F.linear(x, state[prefix + ".0.weight"], state[prefix + ".0.bias"])
    h = 0.5 * h * (1.0 + torch.erf(h / 2.0 ** 0.5))
    return F.linear(h, state[prefix + ".2.weight"], state[prefix + ".2.bias"])


def oracle_season(state, xs, prefix=""):
    mixed = [xs[0]]
    for i in range(1, len(xs)):
        mixed.append(xs[i] + mlp(state, prefix + "down_sampling_layers.%d" % (i - 1), mixed[i - 1]))
    return [m.transpose(1, 2) for m in mixed]


def oracle_trend(state, xs, prefix=""):
    m = len(xs)
    mixed = [None] * m
    mixed[m - 1] = xs[m - 1]
    for i in range(m - 2, -1, -1):
        mixed[i] = xs[i] + mlp(state, prefix + "up_sampling_layers.%d" % (m - 2 - i), mixed[i + 1])
    return [t.transpose(1, 2) for t in mixed]


def decompose(x, kernel):
    """layers/Autoformer_EncDec.py's series_decomp written out: a moving average over time
    (stride 1, the ends repeated), and the remainder. x: (batch, time, d_model)."""
    pad = (kernel - 1) // 2
    padded = torch.cat([x[:, :1, :].repeat(1, pad, 1), x, x[:, -1:, :].repeat(1, pad, 1)], dim=1)
    trend = padded.unfold(1, kernel, 1).mean(dim=-1)
    return x - trend, trend


def run(cls_name, setting, xs, **kwargs):
    return outputs_for(cls_name, setting, [xs], **kwargs)[0]


# ------------------------------------------------------------------- the constructor


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_parameters_have_the_stated_names_and_shapes(cls, setting):
    assert parameter_shapes(cls, setting) == expected_layout(cls, setting)


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_each_mixing_step_is_linear_gelu_linear(cls):
    got = mixing_steps(cls, (16, 2, 3))
    assert got["module_list"] and got["count"] == 3
    for step in got["steps"]:
        assert step["sequential"] and step["length"] == 3
        assert step["linear_first"] and step["linear_last"]
        assert step["gelu"] and step["approximate"] == "none"


# ------------------------------------------------------------------- forward: shapes


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_returns_one_time_major_tensor_per_scale(cls, setting):
    xs = scales(setting, batch=2, channels=3)
    out = run(cls, setting, xs)
    assert isinstance(out, list) and len(out) == len(xs)
    assert [tuple(o.shape) for o in out] == [(2, n, 3) for n in lengths(*setting)]
    assert all(o.dtype == torch.float32 for o in out)


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_float64_in_float64_out(cls):
    setting = (16, 2, 2)
    out = run(cls, setting, scales(setting, dtype=torch.float64), dtype_name="float64")
    assert all(o.dtype == torch.float64 for o in out)


# ------------------------------------------------------------------- forward: the mixing


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_season_mixing_agrees_with_the_bottom_up_recurrence(setting):
    state = random_state(expected_layout(SEASON, setting), torch.float64, seed=3)
    xs = scales(setting, dtype=torch.float64, seed=4)
    out = run(SEASON, setting, xs, dtype_name="float64", state=state)
    want = oracle_season(state, xs)
    assert len(out) == len(want)
    for o, w in zip(out, want):
        assert torch.allclose(o, w, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_trend_mixing_agrees_with_the_top_down_recurrence(setting):
    state = random_state(expected_layout(TREND, setting), torch.float64, seed=5)
    xs = scales(setting, dtype=torch.float64, seed=6)
    out = run(TREND, setting, xs, dtype_name="float64", state=state)
    want = oracle_trend(state, xs)
    assert len(out) == len(want)
    for o, w in zip(out, want):
        assert torch.allclose(o, w, rtol=1e-9, atol=1e-10)


def test_season_finest_scale_passes_through_unchanged():
    setting = (16, 2, 3)
    xs = scales(setting)
    out = run(SEASON, setting, xs)
    assert torch.equal(out[0], xs[0].transpose(1, 2))


def test_trend_coarsest_scale_passes_through_unchanged():
    setting = (16, 2, 3)
    xs = scales(setting)
    out = run(TREND, setting, xs)
    assert torch.equal(out[-1], xs[-1].transpose(1, 2))


def perturbed(xs, k):
    ys = [x.clone() for x in xs]
    ys[k] = ys[k] + 1.0
    return ys


def test_season_scale_depends_only_on_finer_or_equal_scales():
    setting = (16, 2, 3)
    xs = scales(setting, seed=1)
    base, *changed = outputs_for(SEASON, setting, [xs] + [perturbed(xs, k) for k in range(1, len(xs))])
    for k, out in zip(range(1, len(xs)), changed):
        for m in range(k):
            assert torch.equal(out[m], base[m]), (k, m)
        assert not torch.allclose(out[k], base[k])


def test_trend_scale_depends_only_on_coarser_or_equal_scales():
    setting = (16, 2, 3)
    xs = scales(setting, seed=1)
    base, *changed = outputs_for(TREND, setting, [xs] + [perturbed(xs, k) for k in range(len(xs) - 1)])
    for k, out in zip(range(len(xs) - 1), changed):
        for m in range(k + 1, len(xs)):
            assert torch.equal(out[m], base[m]), (k, m)
        assert not torch.allclose(out[k], base[k])


def test_season_coarsest_scale_accumulates_the_finest():
    """Mixing is successive: scale 2 sees scale 0 through the already mixed scale 1."""
    setting = (16, 2, 3)
    xs = scales(setting, seed=2)
    changed, base = outputs_for(SEASON, setting, [perturbed(xs, 0), xs])
    assert not torch.allclose(changed[3], base[3], atol=1e-4)


def test_trend_finest_scale_accumulates_the_coarsest():
    """Mixing is successive: scale 0 sees scale 3 through the already mixed scales 2 and 1."""
    setting = (16, 2, 3)
    xs = scales(setting, seed=2)
    changed, base = outputs_for(TREND, setting, [perturbed(xs, 3), xs])
    assert not torch.allclose(changed[0], base[0], atol=1e-4)


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_zero_mixing_weights_leave_every_scale_as_it_is(cls):
    """The mixed information is added to each scale (a residual), not substituted for it."""
    setting = (15, 2, 2)
    xs = scales(setting, seed=7)
    out = run(cls, setting, xs, zero=True)
    assert len(out) == len(xs)
    for o, x in zip(out, xs):
        assert torch.equal(o, x.transpose(1, 2))


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_channels_are_mixed_independently(cls):
    """Mixing acts along time only: permuting the channels permutes the outputs."""
    setting = (16, 2, 2)
    xs = scales(setting, channels=5, seed=8)
    perm = torch.tensor([3, 0, 4, 1, 2])
    out, out_p = outputs_for(cls, setting, [xs, [x[:, perm, :] for x in xs]])
    for o, op in zip(out, out_p):
        assert torch.allclose(op, o[:, :, perm], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_batch_elements_are_independent(cls):
    setting = (18, 3, 2)
    xs = scales(setting, batch=3, seed=9)
    whole, single = outputs_for(cls, setting, [xs, [x[1:2] for x in xs]])
    for w, s in zip(whole, single):
        assert torch.allclose(w[1:2], s, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------- forward: hygiene


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_input_list_and_tensors_are_left_unchanged(cls):
    setting = (16, 2, 3)
    xs = scales(setting, seed=10)
    got = input_list_after_the_call(cls, setting, xs)
    assert got["same_list"]
    assert len(got["tensors"]) == len(xs)
    assert all(torch.equal(a, b) for a, b in zip(got["tensors"], xs))


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_every_parameter_and_input_gets_a_gradient(cls):
    setting = (16, 2, 3)
    got = gradients(cls, setting, scales(setting, seed=11))
    assert set(got["parameters"]) == set(expected_layout(cls, setting))
    for name, grad in got["parameters"].items():
        assert grad is not None and torch.count_nonzero(grad) > 0, name
    assert all(g is not None for g in got["inputs"])


def test_both_modules_serve_the_past_decomposable_mixing_block():
    """The real caller: the upstream's PDM block builds both modules and sums their outputs."""
    setting = (16, 2, 3)
    d_model, d_ff, kernel = 4, 8, 5  # configs(...) above
    layout = {"layer_norm.weight": (d_model,), "layer_norm.bias": (d_model,)}
    layout.update(expected_layout(SEASON, setting, prefix="mixing_multi_scale_season."))
    layout.update(expected_layout(TREND, setting, prefix="mixing_multi_scale_trend."))
    layout.update({
        "out_cross_layer.0.weight": (d_ff, d_model), "out_cross_layer.0.bias": (d_ff,),
        "out_cross_layer.2.weight": (d_model, d_ff), "out_cross_layer.2.bias": (d_model,),
    })
    state = random_state(layout, torch.float32, seed=12)
    g = torch.Generator().manual_seed(13)
    xs = [torch.randn(2, n, d_model, generator=g) for n in lengths(*setting)]
    out = block_outputs(setting, state, xs)
    season, trend = [], []
    for x in xs:
        s, t = decompose(x, kernel)
        season.append(s.permute(0, 2, 1))
        trend.append(t.permute(0, 2, 1))
    mixed = [a + b for a, b in zip(oracle_season(state, season, "mixing_multi_scale_season."),
                                   oracle_trend(state, trend, "mixing_multi_scale_trend."))]
    want = [x + mlp(state, "out_cross_layer", m) for x, m in zip(xs, mixed)]
    assert [tuple(o.shape) for o in out] == [tuple(x.shape) for x in xs]
    for o, w in zip(out, want):
        assert torch.allclose(o, w, rtol=1e-5, atol=1e-6)
