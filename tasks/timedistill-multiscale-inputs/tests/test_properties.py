"""Property tests for multi_scale_process_inputs.forward (written for lmr).

The module turns a channel-first series (batch, channels, time) into the list of its
temporal scales, finest first, each time-second (batch, time_i, channels): scale 0 is the
series itself, scale i its means over consecutive non-overlapping windows of
down_sampling_window ** i steps (a trailing remainder that fills no window is dropped).
The oracle below computes that in float64 from the definition, without pooling layers.

The module runs in the candidate process (lmr_bridge): the probes below build it there
with the settings given, call it on the series this file chose (or on a view of it, or with
autograd on) and send back what it returned as plain data. Every expected value is
computed here.
"""
import pytest
import torch
from lmr_bridge import probe, probe_helper

CASES = [  # (layers, window, batch, channels, time)
    (3, 2, 2, 3, 96),
    (3, 2, 1, 4, 100),
    (3, 2, 2, 2, 37),
    (0, 2, 2, 3, 10),
    (1, 3, 2, 2, 14),
    (2, 3, 1, 3, 30),
    (4, 2, 2, 1, 47),
    (2, 4, 2, 2, 33),
]


@probe_helper
def make_module(layers, window):
    """In the candidate: the module with these settings (None: the constructor's default)."""
    from exp.exp_long_term_forecasting import multi_scale_process_inputs

    kwargs = {}
    if layers is not None:
        kwargs["down_sampling_layers"] = layers
    if window is not None:
        kwargs["down_sampling_window"] = window
    return multi_scale_process_inputs(**kwargs)


@probe
def scales_of(xs, layers=None, window=None):
    """In the candidate: the module's output for each series in `xs`, as returned."""
    module = make_module(layers, window)
    return [module(x) for x in xs]


@probe
def scales_of_the_permuted(pred):
    """In the candidate: the default module on pred.permute(0, 2, 1), a non-contiguous view,
    as the training loop passes its predictions."""
    x = pred.permute(0, 2, 1)
    return {"contiguous": x.is_contiguous(), "out": make_module(None, None)(x)}


@probe
def gradient_of_a_scale(x, layers, window, index):
    """In the candidate: which outputs require grad, and d(sum of output `index`)/dx."""
    x.requires_grad_(True)
    out = make_module(layers, window)(x)
    flags = [bool(y.requires_grad) for y in out]
    out[index].sum().backward()
    return {"requires_grad": flags, "grad": x.grad}


@probe
def input_after_the_call(x, layers, window):
    """In the candidate: the input as the call left it."""
    make_module(layers, window)(x)
    return x


def _oracle(x, layers, window):
    """Scale i = means over windows of window**i steps from the start, time second."""
    x = x.detach().to(torch.float64)
    scales = []
    for i in range(layers + 1):
        size = window ** i
        n = x.shape[-1] // size
        blocks = x[..., : n * size].reshape(x.shape[0], x.shape[1], n, size)
        scales.append(blocks.mean(dim=-1).transpose(1, 2))
    return scales


def _run(x, layers=None, window=None):
    return scales_of([x], layers, window)[0]


def _series(b, c, t, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(b, c, t, generator=g, dtype=dtype)


@pytest.mark.parametrize("layers,window,b,c,t", CASES)
def test_returns_one_tensor_per_scale_with_time_second(layers, window, b, c, t):
    out = _run(_series(b, c, t), layers, window)
    assert isinstance(out, (list, tuple))
    assert len(out) == layers + 1
    for i, y in enumerate(out):
        assert isinstance(y, torch.Tensor)
        assert tuple(y.shape) == (b, t // window ** i, c)
        assert y.dtype == torch.float32


def test_default_module_gives_four_scales_halving_each_time():
    out = _run(_series(2, 3, 96))
    assert [tuple(y.shape) for y in out] == [(2, 96, 3), (2, 48, 3), (2, 24, 3), (2, 12, 3)]


@pytest.mark.parametrize("layers,window,b,c,t", CASES)
def test_finest_scale_is_the_input_time_second(layers, window, b, c, t):
    x = _series(b, c, t)
    out = _run(x, layers, window)
    assert torch.equal(out[0], x.transpose(1, 2))


@pytest.mark.parametrize("layers,window,b,c,t", CASES)
def test_scales_are_window_means_from_the_definition(layers, window, b, c, t):
    x = _series(b, c, t, dtype=torch.float64, seed=1)
    out = _run(x, layers, window)
    expected = _oracle(x, layers, window)
    assert len(out) == len(expected)
    for y, e in zip(out, expected):
        assert y.dtype == torch.float64
        assert torch.allclose(y, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("layers,window,b,c,t", CASES)
def test_each_scale_averages_the_previous_one(layers, window, b, c, t):
    x = _series(b, c, t, dtype=torch.float64, seed=2)
    out = _run(x, layers, window)
    for fine, coarse in zip(out[:-1], out[1:]):
        n = coarse.shape[1]
        pooled = fine[:, : n * window].reshape(b, n, window, c).mean(dim=2)
        assert torch.allclose(coarse, pooled, rtol=1e-10, atol=1e-12)


def test_trailing_steps_that_fill_no_window_are_ignored():
    x = _series(2, 3, 37, dtype=torch.float64, seed=3)
    changed = x.clone()
    changed[..., 32:] += 100.0  # steps 32..36 lie in no full window of 8, of 4 past 35, of 2 past 36
    a, b = scales_of([x, changed])
    assert torch.allclose(a[3], b[3], rtol=0, atol=1e-12)
    assert torch.allclose(a[2][:, :8], b[2][:, :8], rtol=0, atol=1e-12)
    assert not torch.allclose(a[2], b[2])  # window 8 (steps 32..35) of scale 2 sees the change


def test_constant_series_stays_constant_at_every_scale():
    x = torch.full((2, 3, 40), 2.5, dtype=torch.float64)
    x[:, 1] = -7.0
    for y in _run(x):
        assert torch.allclose(y[:, :, 0], torch.full_like(y[:, :, 0], 2.5), rtol=0, atol=1e-12)
        assert torch.allclose(y[:, :, 1], torch.full_like(y[:, :, 1], -7.0), rtol=0, atol=1e-12)


def test_linear_in_the_input():
    x = _series(2, 3, 64, dtype=torch.float64, seed=4)
    z = _series(2, 3, 64, dtype=torch.float64, seed=5)
    combined, out_x, out_z = scales_of([3.0 * x - 0.5 * z, x, z])
    for y, yx, yz in zip(combined, out_x, out_z):
        assert torch.allclose(y, 3.0 * yx - 0.5 * yz, rtol=1e-10, atol=1e-12)


def test_channels_and_batch_elements_are_processed_independently():
    x = _series(3, 4, 48, dtype=torch.float64, seed=6)
    perm_c = torch.tensor([2, 0, 3, 1])
    perm_b = torch.tensor([1, 2, 0])
    out, out_perm = scales_of([x, x[perm_b][:, perm_c]])
    for y, yp in zip(out, out_perm):
        assert torch.allclose(yp, y[perm_b][:, :, perm_c], rtol=0, atol=1e-12)


def test_gradient_reaches_the_input_with_window_weights():
    t = 21
    x = _series(1, 2, t, dtype=torch.float64, seed=7)
    got = gradient_of_a_scale(x, 2, 2, 2)
    assert got["requires_grad"] == [True, True, True]
    expected = torch.zeros(1, 2, t, dtype=torch.float64)
    expected[..., :20] = 0.25  # 5 windows of 4 steps; step 20 lies in none
    assert isinstance(got["grad"], torch.Tensor), got["grad"]
    assert torch.allclose(got["grad"], expected, rtol=0, atol=1e-12)


def test_input_is_left_unchanged():
    x = _series(2, 3, 50)
    after = input_after_the_call(x.clone(), 4, 2)
    assert torch.equal(after, x)


def test_non_contiguous_input_as_the_training_loop_passes_it():
    pred = _series(2, 40, 3, dtype=torch.float64, seed=8)  # (batch, pred_len, channels)
    got = scales_of_the_permuted(pred)
    assert got["contiguous"] is False
    out = got["out"]
    expected = _oracle(pred.permute(0, 2, 1), 3, 2)
    assert len(out) == len(expected)
    for y, e in zip(out, expected):
        assert torch.allclose(y, e, rtol=1e-10, atol=1e-12)
