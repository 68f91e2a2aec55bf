"""Property tests for `SVDLinear.forward` (loralib/loralib/adalora.py), from the AdaLoRA paper.

Written for lmr (not upstream code). The oracle below is the paper's SVD-form update
W = W0 + P diag(lambda) Q (Eq. 1 of AdaLoRA), scaled as the layer documents it, computed in
float64 with plain tensor algebra; layers are built with fixed seeds and given non-zero
P (lora_B), Q (lora_A) and lambda (lora_E), since the initial lambda is zero.
"""
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

_no_grad = torch.no_grad
_grad = torch.autograd.grad
_manual_seed = torch.manual_seed
_Generator = torch.Generator
_randn = torch.randn
_float64 = torch.float64
_Tensor = torch.Tensor
_set_training = nn.Module.train

sys.path.insert(0, str(Path.cwd() / "loralib"))
from loralib.adalora import SVDLinear  # noqa: E402

EPS = 1e-5  # added to ranknum in the scaling, as in the layer's train()/eval()


def assert_close(actual, expected, rtol=1e-10, atol=1e-12, what=""):
    assert tuple(actual.shape) == tuple(expected.shape), "%s: shape %s, expected %s" % (what, tuple(actual.shape), tuple(expected.shape))
    a = [float(v) for v in actual.detach().reshape(-1).tolist()]
    e = [float(v) for v in expected.detach().reshape(-1).tolist()]
    for i, (x, y) in enumerate(zip(a, e)):
        assert abs(x - y) <= atol + rtol * abs(y), "%s[%d]: expected %r, got %r" % (what, i, y, x)


def make_layer(fin=6, fout=5, r=3, alpha=4, dropout=0.0, fifo=False, merge=True, bias=True, seed=0, ranknum=None):
    """A float64 SVDLinear with seeded W0, b and non-zero lora_A, lora_B, lora_E."""
    _manual_seed(seed)
    layer = SVDLinear(fin, fout, r=r, lora_alpha=alpha, lora_dropout=dropout, fan_in_fan_out=fifo,
                      merge_weights=merge, bias=bias).double()
    gen = _Generator().manual_seed(seed + 1)
    with _no_grad():
        if bias:
            layer.bias.copy_(_randn(fout, generator=gen, dtype=_float64))
        if r > 0:
            layer.lora_A.copy_(_randn(r, fin, generator=gen, dtype=_float64) * 0.5)
            layer.lora_B.copy_(_randn(fout, r, generator=gen, dtype=_float64) * 0.5)
            layer.lora_E.copy_(_randn(r, 1, generator=gen, dtype=_float64))
            if ranknum is not None:
                layer.ranknum.fill_(ranknum)
    return layer


def inputs(*shape, seed=7):
    return _randn(*shape, generator=_Generator().manual_seed(seed), dtype=_float64)


def base_weight(layer):
    """W0 in (out, in) orientation, whatever fan_in_fan_out says."""
    w = layer.weight.detach()
    return w.T if layer.fan_in_fan_out else w


def oracle(layer, x, A=None, B=None, E=None):
    """x W0^T + b + x (B diag(E) A)^T * scaling / (ranknum + EPS), in float64."""
    y = x @ base_weight(layer).T
    if layer.bias is not None:
        y = y + layer.bias.detach()
    if layer.r > 0:
        A = layer.lora_A.detach() if A is None else A
        B = layer.lora_B.detach() if B is None else B
        E = layer.lora_E.detach() if E is None else E
        delta = B @ (E * A)  # B diag(E) A
        y = y + (x @ delta.T) * (layer.scaling / (float(layer.ranknum.item()) + EPS))
    return y


# -------------------------------------------------------------------- the SVD-form update


@pytest.mark.parametrize("r,alpha", [(1, 1), (2, 8), (4, 4), (4, 0), (6, 12)])
@pytest.mark.parametrize("fifo", [False, True])
def test_unmerged_output_is_base_plus_scaled_svd_update(r, alpha, fifo):
    layer = make_layer(fin=7, fout=5, r=r, alpha=alpha, fifo=fifo, seed=r)
    layer.train()
    x = inputs(4, 7)
    assert_close(layer(x), oracle(layer, x), what="output")


@pytest.mark.parametrize("ranknum", [0.5, 2.0, 7.0])
def test_scaling_divides_by_ranknum_not_r(ranknum):
    layer = make_layer(r=4, alpha=8, ranknum=ranknum, seed=3)
    layer.train()
    x = inputs(3, 6)
    assert_close(layer(x), oracle(layer, x), what="output")


def test_zero_singular_values_leave_the_base_layer():
    # At initialisation lambda = 0: the layer is exactly the pre-trained linear map.
    layer = make_layer(r=4, seed=5)
    with _no_grad():
        layer.lora_E.zero_()
    layer.train()
    x = inputs(3, 6)
    expected = x @ layer.weight.detach().T + layer.bias.detach()
    assert_close(layer(x), expected, rtol=1e-12, atol=1e-14, what="output")


def test_update_is_linear_in_singular_values():
    layer = make_layer(r=3, seed=11)
    layer.train()
    x = inputs(5, 6)
    base = x @ layer.weight.detach().T + layer.bias.detach()
    one = layer(x) - base
    with _no_grad():
        layer.lora_E.mul_(-2.5)
    two = layer(x) - base
    assert_close(two, one * -2.5, rtol=1e-9, atol=1e-12, what="update with lambda * -2.5")


def test_pruned_singular_values_drop_their_triplet():
    # AdaLoRA prunes a triplet by zeroing its lambda: the rest is then a rank r-1 update.
    layer = make_layer(r=4, alpha=8, seed=13)
    layer.train()
    with _no_grad():
        layer.lora_E[2, 0] = 0.0
        layer.lora_A[2].mul_(100.0)
        layer.lora_B[:, 2].mul_(100.0)
    x = inputs(3, 6)
    keep = [0, 1, 3]
    A, B, E = layer.lora_A.detach()[keep], layer.lora_B.detach()[:, keep], layer.lora_E.detach()[keep]
    assert_close(layer(x), oracle(layer, x, A, B, E), what="output")


# ------------------------------------------------------------------- merged / unmerged


@pytest.mark.parametrize("fifo", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_merged_eval_equals_unmerged(fifo, bias):
    x = inputs(2, 3, 6)
    merged = make_layer(r=3, fifo=fifo, bias=bias, dropout=0.2, merge=True, seed=17)
    unmerged = make_layer(r=3, fifo=fifo, bias=bias, dropout=0.2, merge=False, seed=17)
    merged.eval()  # merges the update into the weight
    unmerged.eval()  # merge_weights=False: keeps it apart
    assert_close(merged(x), unmerged(x), rtol=1e-9, atol=1e-12, what="merged vs unmerged")


def test_merged_layer_does_not_add_the_update_again():
    layer = make_layer(r=2, alpha=16, seed=19)
    x = inputs(4, 6)
    layer.eval()  # merge_weights=True: the update is now inside layer.weight
    # With merged weights the forward is the plain linear map of the merged weight.
    expected = x @ layer.weight.detach().T + layer.bias.detach()
    assert_close(layer(x), expected, rtol=1e-12, atol=1e-14, what="merged output")


def test_merged_output_equals_the_training_output():
    layer = make_layer(r=2, alpha=16, seed=19)
    x = inputs(4, 6)
    layer.train()
    y_train = layer(x)
    layer.eval()
    assert_close(layer(x), y_train, rtol=1e-9, atol=1e-12, what="eval vs train output")


def test_unmerging_restores_the_training_output():
    layer = make_layer(r=2, alpha=16, seed=19)
    x = inputs(4, 6)
    layer.train()
    y_train = layer(x)
    layer.eval()
    layer.train()  # subtracts the update from the weight again
    assert_close(layer(x), y_train, rtol=1e-9, atol=1e-12, what="after unmerging")


def test_forward_does_not_merge_or_touch_parameters():
    layer = make_layer(r=3, seed=23)
    layer.train()
    before = {n: p.detach().clone() for n, p in layer.named_parameters()}
    layer(inputs(2, 6))
    assert not layer.merged
    for n, p in layer.named_parameters():
        assert bool((p.detach() == before[n]).all()), "forward changed %s" % n


# -------------------------------------------------------------------------------- r = 0


@pytest.mark.parametrize("fifo", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_rank_zero_is_a_plain_linear_layer(fifo, bias, mode):
    layer = make_layer(r=0, fifo=fifo, bias=bias, seed=29)
    assert not hasattr(layer, "lora_A")
    getattr(layer, mode)()
    x = inputs(3, 6)
    expected = x @ base_weight(layer).T
    if bias:
        expected = expected + layer.bias.detach()
    assert_close(layer(x), expected, rtol=1e-12, atol=1e-14, what="output")


# ------------------------------------------------------------------------------ dropout


def test_dropout_applies_to_the_update_branch_only():
    layer = make_layer(r=3, alpha=4, dropout=0.5, seed=31)
    layer.train()
    x = inputs(8, 6)
    _manual_seed(99)
    y = layer(x)
    _manual_seed(99)
    dropped = layer.lora_dropout(x)  # the same draw the forward made
    assert bool((dropped == 0).any()), "the seed should drop something"
    base = x @ layer.weight.detach().T + layer.bias.detach()
    update = oracle(layer, dropped) - (dropped @ layer.weight.detach().T + layer.bias.detach())
    assert_close(y, base + update, rtol=1e-9, atol=1e-12, what="output with dropout")


def test_dropout_is_inactive_in_eval_mode_without_merging():
    layer = make_layer(r=3, dropout=0.9, merge=False, seed=37)
    layer.eval()
    x = inputs(5, 6)
    assert_close(layer(x), oracle(layer, x), what="output")


def test_dropout_never_touches_the_base_branch():
    layer = make_layer(r=3, dropout=0.7, seed=41)
    with _no_grad():
        layer.lora_E.zero_()
    layer.train()
    x = inputs(6, 6)
    expected = x @ layer.weight.detach().T + layer.bias.detach()
    for seed in range(3):
        _manual_seed(seed)
        assert_close(layer(x), expected, rtol=1e-12, atol=1e-14, what="output (seed %d)" % seed)


# ------------------------------------------------------------------------------- shapes


@pytest.mark.parametrize("shape", [(6,), (1, 6), (5, 6), (2, 3, 6), (2, 1, 4, 6)])
@pytest.mark.parametrize("fifo", [False, True])
def test_any_leading_batch_shape(shape, fifo):
    layer = make_layer(r=2, fifo=fifo, seed=43)
    layer.train()
    x = inputs(*shape)
    assert_close(layer(x), oracle(layer, x), what="output")  # shape (..., out_features) first


def test_float32_layer_returns_float32():
    layer = make_layer(r=2, seed=47).float()
    layer.train()
    assert layer(inputs(3, 6).float()).dtype == torch.float32


def test_float32_layer_computes_the_svd_form():
    layer = make_layer(r=2, seed=47).float()
    layer.train()
    y = layer(inputs(3, 6).float())
    ref = make_layer(r=2, seed=47)
    with _no_grad():
        for (n, p), (_, q) in zip(layer.named_parameters(), ref.named_parameters()):
            q.copy_(p.double())
    assert_close(y.double(), oracle(ref, inputs(3, 6).float().double()), rtol=1e-5, atol=1e-5, what="float32 output")


# ---------------------------------------------------------------------------- gradients


@pytest.mark.parametrize("fifo", [False, True])
def test_gradients_follow_the_svd_form(fifo):
    layer = make_layer(r=3, alpha=6, fifo=fifo, seed=53)
    layer.train()
    x = inputs(4, 6).requires_grad_(True)
    w = inputs(4, 5, seed=8)  # a random cotangent
    loss = (layer(x) * w).sum()
    gA, gB, gE, gx = _grad(loss, [layer.lora_A, layer.lora_B, layer.lora_E, x])

    A = layer.lora_A.detach().clone().requires_grad_(True)
    B = layer.lora_B.detach().clone().requires_grad_(True)
    E = layer.lora_E.detach().clone().requires_grad_(True)
    x2 = x.detach().clone().requires_grad_(True)
    eA, eB, eE, ex = _grad((oracle(layer, x2, A, B, E) * w).sum(), [A, B, E, x2])
    assert_close(gA, eA, rtol=1e-9, atol=1e-12, what="d/d lora_A")
    assert_close(gB, eB, rtol=1e-9, atol=1e-12, what="d/d lora_B")
    assert_close(gE, eE, rtol=1e-9, atol=1e-12, what="d/d lora_E")
    assert_close(gx, ex, rtol=1e-9, atol=1e-12, what="d/d x")
