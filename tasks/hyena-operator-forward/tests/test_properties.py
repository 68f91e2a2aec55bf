"""Property tests for `HyenaOperator.forward` (standalone_hyena.py).

Each test checks one property that follows from the paper's definition of the order-N Hyena
operator (Section 3) and the contract in the instruction, on small operators built the way
the upstream builds them. The oracle below is written from the definition: the projections
and the causal short filter, a long convolution computed directly as a sum over past
positions (no FFT), the gates taken in the order the contract states, in float64.
"""
import pytest
import torch
import torch.nn.functional as F

from standalone_hyena import HyenaOperator

# float32 forward (FFT or direct) against the float64 direct oracle
ATOL = 2e-5
RTOL = 2e-4


def make_op(d_model=8, l_max=24, order=2, filter_order=16, seed=0, perturb=True, **kw):
    torch.manual_seed(seed)
    op = HyenaOperator(d_model=d_model, l_max=l_max, order=order, filter_order=filter_order, **kw)
    if perturb:  # weights as training leaves them, not as initialised
        with torch.no_grad():
            for p in op.parameters():
                p.add_(0.2 * torch.randn_like(p))
    return op


def inputs(b, l, d, seed=1, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(b, l, d, generator=g, dtype=dtype)


def direct_causal_conv(v, h, skip):
    """v (B, D, L), h (D, L) filter taps, skip (D,): sum_{s<=t} h[:, t-s] v[:, s] + skip v[:, t]."""
    length = v.shape[-1]
    t = torch.arange(length)
    lag = t[:, None] - t[None, :]  # (t, s)
    toeplitz = h[:, lag.clamp(min=0)] * (lag >= 0)  # (D, t, s)
    return torch.einsum("dts,bds->bdt", toeplitz, v) + skip[None, :, None] * v


def oracle(op, u):
    """The operator's output computed from its submodules by the definition, in float64."""
    with torch.no_grad():
        d, n = op.d_model, op.order
        u = u.double()
        length = u.shape[1]
        z = F.linear(u, op.in_proj.weight.double(), op.in_proj.bias.double()).transpose(1, 2)
        # depthwise short filter of width 3, causal: position t sees t-2, t-1, t
        w = op.short_filter.weight.double()[:, 0, :]  # (C, 3)
        zp = F.pad(z, (2, 0))
        z = (w[None, :, 0, None] * zp[..., :length] + w[None, :, 1, None] * zp[..., 1:length + 1]
             + w[None, :, 2, None] * zp[..., 2:] + op.short_filter.bias.double()[None, :, None])
        chunks = [z[:, i * d:(i + 1) * d] for i in range(n + 1)]
        gates, v = chunks[:n], chunks[n]
        h = op.filter_fn.filter(length)[0].double()  # (L, (n-1) d)
        skip = op.filter_fn.bias.double()
        for o in range(n - 1):
            v = v * gates[n - 1 - o]
            v = direct_causal_conv(v, h[:, o * d:(o + 1) * d].T, skip[o * d:(o + 1) * d])
        y = (v * gates[0]).transpose(1, 2)
        return F.linear(y, op.out_proj.weight.double(), op.out_proj.bias.double())


@pytest.mark.parametrize("order,d_model,l_max,length,batch", [
    (2, 8, 24, 24, 2), (2, 8, 24, 7, 3), (3, 8, 32, 32, 2), (4, 4, 16, 11, 2), (2, 8, 16, 1, 2),
])
def test_output_shape_and_dtype_match_input(order, d_model, l_max, length, batch):
    op = make_op(d_model=d_model, l_max=l_max, order=order, filter_order=8)
    y = op(inputs(batch, length, d_model))
    assert isinstance(y, torch.Tensor)
    assert y.shape == (batch, length, d_model)
    assert y.dtype == torch.float32


def test_float64_module_returns_float64():
    op = make_op(d_model=6, l_max=16, order=3, filter_order=8).double()
    y = op(inputs(2, 16, 6, dtype=torch.float64))
    assert y.dtype == torch.float64 and y.shape == (2, 16, 6)


@pytest.mark.parametrize("order,d_model,l_max,length,seed", [
    (2, 8, 24, 24, 3), (2, 8, 32, 13, 4), (3, 8, 24, 24, 5), (3, 6, 20, 9, 6), (4, 4, 16, 16, 7),
])
def test_matches_direct_convolution_oracle(order, d_model, l_max, length, seed):
    op = make_op(d_model=d_model, l_max=l_max, order=order, filter_order=8, seed=seed)
    u = inputs(2, length, d_model, seed=seed)
    torch.testing.assert_close(op(u).double(), oracle(op, u), atol=ATOL, rtol=RTOL)


def test_float64_matches_oracle_tightly():
    op = make_op(d_model=6, l_max=20, order=3, filter_order=8, seed=8).double()
    u = inputs(2, 20, 6, seed=8, dtype=torch.float64)
    torch.testing.assert_close(op(u), oracle(op, u), atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("order", [2, 3])
def test_causal_future_inputs_do_not_change_past_outputs(order):
    op = make_op(d_model=8, l_max=32, order=order, seed=10 + order)
    u = inputs(2, 32, 8, seed=11)
    y = op(u)
    for t in (0, 5, 17, 30):
        w = u.clone()
        w[:, t + 1:] += 3.0 * torch.randn_like(w[:, t + 1:])
        torch.testing.assert_close(op(w)[:, :t + 1], y[:, :t + 1], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("order", [2, 3])
def test_output_depends_on_the_distant_past(order):
    # a long convolution: the last position sees the first one (a short filter alone cannot)
    op = make_op(d_model=8, l_max=32, order=order, seed=20 + order)
    u = inputs(1, 32, 8, seed=21).requires_grad_(True)
    (grad,) = torch.autograd.grad(op(u)[0, -1].sum(), u)
    assert grad[0, 0].abs().sum() > 1e-6
    assert grad[0, 31].abs().sum() > 1e-6


def test_prefix_of_a_sequence_gives_prefix_of_the_output():
    op = make_op(d_model=8, l_max=32, order=3, seed=30)
    u = inputs(2, 32, 8, seed=31)
    torch.testing.assert_close(op(u[:, :12]), op(u)[:, :12], atol=1e-5, rtol=1e-4)


def test_batch_elements_are_independent():
    op = make_op(d_model=8, l_max=24, order=3, seed=40)
    u = inputs(3, 24, 8, seed=41)
    y = op(u)
    for i in range(3):
        torch.testing.assert_close(op(u[i:i + 1]), y[i:i + 1], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("order", [2, 3, 4])
def test_order_n_without_biases_is_homogeneous_of_degree_n_plus_one(order):
    # order N: N gates and one value, each linear in u once the biases are zero, so scaling
    # the input by c scales the output by c ** (N + 1)
    op = make_op(d_model=4, l_max=16, order=order, filter_order=8, seed=50 + order)
    with torch.no_grad():
        op.in_proj.bias.zero_()
        op.short_filter.bias.zero_()
        op.out_proj.bias.zero_()
    op = op.double()
    u = inputs(2, 16, 4, seed=51, dtype=torch.float64)
    c = 1.7
    torch.testing.assert_close(op(c * u), c ** (order + 1) * op(u), atol=1e-9, rtol=1e-8)


def test_every_parameter_receives_a_gradient():
    op = make_op(d_model=8, l_max=16, order=3, filter_order=8, seed=60)
    u = inputs(2, 16, 8, seed=61)
    op(u).pow(2).sum().backward()
    missing = [name for name, p in op.named_parameters() if p.grad is None or p.grad.abs().sum() == 0]
    assert missing == []


def test_input_is_not_modified():
    op = make_op(d_model=8, l_max=16, order=3, seed=70)
    u = inputs(2, 16, 8, seed=71)
    before = u.clone()
    op(u)
    assert torch.equal(u, before)


def test_dropout_is_inactive_in_eval_mode():
    op = make_op(d_model=8, l_max=16, order=3, seed=80, dropout=0.5).eval()
    u = inputs(2, 16, 8, seed=81)
    torch.testing.assert_close(op(u).double(), oracle(op, u), atol=ATOL, rtol=RTOL)


def test_dropout_is_applied_in_training_mode():
    op = make_op(d_model=8, l_max=16, order=3, seed=90, dropout=0.5).train()
    u = inputs(2, 16, 8, seed=91)
    torch.manual_seed(0)
    y = op(u)
    assert not torch.allclose(y.double(), oracle(op, u), atol=1e-3, rtol=1e-3)
