"""Property tests for MultiScaleSeasonMixing and MultiScaleTrendMixing (models/TimeMixer.py).

Written from the paper (Section 3, Past Decomposable Mixing: seasonal mixing bottom-up, from
fine to coarse scales; trend mixing top-down, from coarse to fine; each mixing step a
two-layer MLP with a GELU along the time axis, added as a residual) and from the contract in
the instruction. Inputs are what PastDecomposableMixing hands the two modules: one tensor
per scale, shape (batch, channels, T_i) with T_i = seq_len // window ** i, i = 0 .. layers.
Everything is seeded; sizes are tiny.
"""
import argparse

import pytest
import torch
import torch.nn.functional as F

from models.TimeMixer import MultiScaleSeasonMixing, MultiScaleTrendMixing, PastDecomposableMixing

# (seq_len, window, layers): the scripts' setting, a window of 3, floors, one layer only
SETTINGS = [(16, 2, 3), (18, 3, 2), (15, 2, 2), (8, 2, 1), (12, 3, 2)]


def configs(seq_len, window, layers):
    return argparse.Namespace(
        seq_len=seq_len, pred_len=4, down_sampling_window=window, down_sampling_layers=layers,
        d_model=4, d_ff=8, dropout=0.0, channel_independence=1, decomp_method="moving_avg",
        moving_avg=5, top_k=2, e_layers=2, enc_in=3, c_out=3,
    )


def lengths(seq_len, window, layers):
    return [seq_len // window ** i for i in range(layers + 1)]


def scales(setting, batch=2, channels=3, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, channels, n, generator=g, dtype=dtype) for n in lengths(*setting)]


def build(cls, setting, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    module = cls(configs(*setting)).to(dtype)
    # weights away from their initialisation, biases non-zero
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module


def expected_layout(cls, setting):
    """state_dict entry -> shape, as the instruction states it."""
    n = lengths(*setting)
    layers = setting[2]
    out = {}
    if cls is MultiScaleSeasonMixing:
        for i in range(layers):
            a, b = n[i], n[i + 1]
            out.update({
                "down_sampling_layers.%d.0.weight" % i: (b, a), "down_sampling_layers.%d.0.bias" % i: (b,),
                "down_sampling_layers.%d.2.weight" % i: (b, b), "down_sampling_layers.%d.2.bias" % i: (b,),
            })
    else:
        for k in range(layers):
            a, b = n[layers - k], n[layers - k - 1]
            out.update({
                "up_sampling_layers.%d.0.weight" % k: (b, a), "up_sampling_layers.%d.0.bias" % k: (b,),
                "up_sampling_layers.%d.2.weight" % k: (b, b), "up_sampling_layers.%d.2.bias" % k: (b,),
            })
    return out


def mlp(seq, x):
    """Linear, exact GELU, Linear over the last axis, from the Sequential's own weights."""
    h = F.linear(x, seq[0].weight, seq[0].bias)
    h = 0.5 * h * (1.0 + torch.erf(h / 2.0 ** 0.5))
    return F.linear(h, seq[2].weight, seq[2].bias)


def oracle_season(module, xs):
    mixed = [xs[0]]
    for i in range(1, len(xs)):
        mixed.append(xs[i] + mlp(module.down_sampling_layers[i - 1], mixed[i - 1]))
    return [m.transpose(1, 2) for m in mixed]


def oracle_trend(module, xs):
    m = len(xs)
    mixed = [None] * m
    mixed[m - 1] = xs[m - 1]
    for i in range(m - 2, -1, -1):
        mixed[i] = xs[i] + mlp(module.up_sampling_layers[m - 2 - i], mixed[i + 1])
    return [t.transpose(1, 2) for t in mixed]


BOTH = [MultiScaleSeasonMixing, MultiScaleTrendMixing]
NAMES = {MultiScaleSeasonMixing: "season", MultiScaleTrendMixing: "trend"}


def run(module, xs):
    return module(list(xs))


# ------------------------------------------------------------------- the constructor


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_parameters_have_the_stated_names_and_shapes(cls, setting):
    module = cls(configs(*setting))
    got = {k: tuple(v.shape) for k, v in module.state_dict().items()}
    assert got == expected_layout(cls, setting)


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_each_mixing_step_is_linear_gelu_linear(cls):
    module = cls(configs(16, 2, 3))
    steps = module.down_sampling_layers if cls is MultiScaleSeasonMixing else module.up_sampling_layers
    assert isinstance(steps, torch.nn.ModuleList) and len(steps) == 3
    for step in steps:
        assert isinstance(step, torch.nn.Sequential) and len(step) == 3
        assert isinstance(step[0], torch.nn.Linear) and isinstance(step[2], torch.nn.Linear)
        assert isinstance(step[1], torch.nn.GELU) and step[1].approximate == "none"


# ------------------------------------------------------------------- forward: shapes


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_returns_one_time_major_tensor_per_scale(cls, setting):
    xs = scales(setting, batch=2, channels=3)
    out = run(build(cls, setting), xs)
    assert isinstance(out, list) and len(out) == len(xs)
    assert [tuple(o.shape) for o in out] == [(2, n, 3) for n in lengths(*setting)]
    assert all(o.dtype == torch.float32 for o in out)


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_float64_in_float64_out(cls):
    setting = (16, 2, 2)
    out = run(build(cls, setting, dtype=torch.float64), scales(setting, dtype=torch.float64))
    assert all(o.dtype == torch.float64 for o in out)


# ------------------------------------------------------------------- forward: the mixing


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_season_mixing_agrees_with_the_bottom_up_recurrence(setting):
    module = build(MultiScaleSeasonMixing, setting, dtype=torch.float64, seed=3)
    xs = scales(setting, dtype=torch.float64, seed=4)
    out = run(module, xs)
    with torch.no_grad():
        want = oracle_season(module, xs)
    for o, w in zip(out, want):
        assert torch.allclose(o, w, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_trend_mixing_agrees_with_the_top_down_recurrence(setting):
    module = build(MultiScaleTrendMixing, setting, dtype=torch.float64, seed=5)
    xs = scales(setting, dtype=torch.float64, seed=6)
    out = run(module, xs)
    with torch.no_grad():
        want = oracle_trend(module, xs)
    for o, w in zip(out, want):
        assert torch.allclose(o, w, rtol=1e-9, atol=1e-10)


def test_season_finest_scale_passes_through_unchanged():
    setting = (16, 2, 3)
    xs = scales(setting)
    out = run(build(MultiScaleSeasonMixing, setting), xs)
    assert torch.equal(out[0], xs[0].transpose(1, 2))


def test_trend_coarsest_scale_passes_through_unchanged():
    setting = (16, 2, 3)
    xs = scales(setting)
    out = run(build(MultiScaleTrendMixing, setting), xs)
    assert torch.equal(out[-1], xs[-1].transpose(1, 2))


def test_season_scale_depends_only_on_finer_or_equal_scales():
    setting = (16, 2, 3)
    module = build(MultiScaleSeasonMixing, setting)
    xs = scales(setting, seed=1)
    base = run(module, xs)
    for k in range(1, len(xs)):
        ys = [x.clone() for x in xs]
        ys[k] = ys[k] + 1.0
        out = run(module, ys)
        for m in range(k):
            assert torch.equal(out[m], base[m]), (k, m)
        assert not torch.allclose(out[k], base[k])


def test_trend_scale_depends_only_on_coarser_or_equal_scales():
    setting = (16, 2, 3)
    module = build(MultiScaleTrendMixing, setting)
    xs = scales(setting, seed=1)
    base = run(module, xs)
    for k in range(len(xs) - 1):
        ys = [x.clone() for x in xs]
        ys[k] = ys[k] + 1.0
        out = run(module, ys)
        for m in range(k + 1, len(xs)):
            assert torch.equal(out[m], base[m]), (k, m)
        assert not torch.allclose(out[k], base[k])


def test_season_coarsest_scale_accumulates_the_finest():
    """Mixing is successive: scale 2 sees scale 0 through the already mixed scale 1."""
    setting = (16, 2, 3)
    module = build(MultiScaleSeasonMixing, setting)
    xs = scales(setting, seed=2)
    ys = [x.clone() for x in xs]
    ys[0] = ys[0] + 1.0
    assert not torch.allclose(run(module, ys)[3], run(module, xs)[3], atol=1e-4)


def test_trend_finest_scale_accumulates_the_coarsest():
    """Mixing is successive: scale 0 sees scale 3 through the already mixed scales 2 and 1."""
    setting = (16, 2, 3)
    module = build(MultiScaleTrendMixing, setting)
    xs = scales(setting, seed=2)
    ys = [x.clone() for x in xs]
    ys[3] = ys[3] + 1.0
    assert not torch.allclose(run(module, ys)[0], run(module, xs)[0], atol=1e-4)


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_zero_mixing_weights_leave_every_scale_as_it_is(cls):
    """The mixed information is added to each scale (a residual), not substituted for it."""
    setting = (15, 2, 2)
    module = build(cls, setting)
    with torch.no_grad():
        for p in module.parameters():
            p.zero_()
    xs = scales(setting, seed=7)
    for o, x in zip(run(module, xs), xs):
        assert torch.equal(o, x.transpose(1, 2))


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_channels_are_mixed_independently(cls):
    """Mixing acts along time only: permuting the channels permutes the outputs."""
    setting = (16, 2, 2)
    module = build(cls, setting)
    xs = scales(setting, channels=5, seed=8)
    perm = torch.tensor([3, 0, 4, 1, 2])
    out = run(module, xs)
    out_p = run(module, [x[:, perm, :] for x in xs])
    for o, op in zip(out, out_p):
        assert torch.allclose(op, o[:, :, perm], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_batch_elements_are_independent(cls):
    setting = (18, 3, 2)
    module = build(cls, setting)
    xs = scales(setting, batch=3, seed=9)
    whole = run(module, xs)
    single = run(module, [x[1:2] for x in xs])
    for w, s in zip(whole, single):
        assert torch.allclose(w[1:2], s, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------- forward: hygiene


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_input_list_and_tensors_are_left_unchanged(cls):
    setting = (16, 2, 3)
    module = build(cls, setting)
    xs = scales(setting, seed=10)
    given = list(xs)
    copies = [x.clone() for x in xs]
    module(given)
    assert len(given) == len(xs) and all(a is b for a, b in zip(given, xs))
    assert all(torch.equal(a, b) for a, b in zip(xs, copies))


@pytest.mark.parametrize("cls", BOTH, ids=NAMES.get)
def test_every_parameter_and_input_gets_a_gradient(cls):
    setting = (16, 2, 3)
    module = build(cls, setting)
    xs = [x.requires_grad_(True) for x in scales(setting, seed=11)]
    out = module(list(xs))
    sum((o ** 2).sum() for o in out).backward()
    for name, p in module.named_parameters():
        assert p.grad is not None and torch.count_nonzero(p.grad) > 0, name
    assert all(x.grad is not None for x in xs)


def test_both_modules_serve_the_past_decomposable_mixing_block():
    """The real caller: the upstream's PDM block builds both modules and sums their outputs."""
    cfg = configs(16, 2, 3)
    torch.manual_seed(12)
    block = PastDecomposableMixing(cfg).eval()
    g = torch.Generator().manual_seed(13)
    xs = [torch.randn(2, n, cfg.d_model, generator=g) for n in lengths(16, 2, 3)]
    with torch.no_grad():
        out = block(xs)
        season, trend = [], []
        for x in xs:
            s, t = block.decompsition(x)
            season.append(s.permute(0, 2, 1))
            trend.append(t.permute(0, 2, 1))
        mixed = [a + b for a, b in zip(oracle_season(block.mixing_multi_scale_season, season),
                                       oracle_trend(block.mixing_multi_scale_trend, trend))]
        want = [x + block.out_cross_layer(m) for x, m in zip(xs, mixed)]
    assert [tuple(o.shape) for o in out] == [tuple(x.shape) for x in xs]
    for o, w in zip(out, want):
        assert torch.allclose(o, w, rtol=1e-5, atol=1e-6)
