"""Property tests for `SVDLinear.forward` (loralib/loralib/adalora.py), from the AdaLoRA paper.

Written for lmr (not upstream code). The oracle below is the paper's SVD-form update
W = W0 + P diag(lambda) Q (Eq. 1 of AdaLoRA), scaled as the layer documents it, computed in
float64 with plain tensor algebra; layers are given seeded W0, b and non-zero P (lora_B),
Q (lora_A) and lambda (lora_E), since the initial lambda is zero.

The layer lives in the candidate process (lmr_bridge): the probes below build it there with
the upstream constructor, load a state this file chose (`make_state`: every parameter, ranknum
and scaling), drive it (train()/eval(), forward, backward) and return plain data. Every
expected value is computed here from that state, the merged weight of eval() too.
"""
import math

import pytest
import torch
from lmr_bridge import probe, probe_helper

_grad = torch.autograd.grad
_Generator = torch.Generator
_randn = torch.randn
_float64 = torch.float64

EPS = 1e-5  # added to ranknum in the scaling, as in the layer's train()/eval()


def assert_close(actual, expected, rtol=1e-10, atol=1e-12, what=""):
    assert tuple(actual.shape) == tuple(expected.shape), "%s: shape %s, expected %s" % (what, tuple(actual.shape), tuple(expected.shape))
    a = [float(v) for v in actual.detach().reshape(-1).tolist()]
    e = [float(v) for v in expected.detach().reshape(-1).tolist()]
    for i, (x, y) in enumerate(zip(a, e)):
        assert abs(x - y) <= atol + rtol * abs(y), "%s[%d]: expected %r, got %r" % (what, i, y, x)


def make_state(fin=6, fout=5, r=3, alpha=4, dropout=0.0, fifo=False, merge=True, bias=True, seed=0, ranknum=None):
    """A float64 SVDLinear, chosen here: the constructor's arguments and every number the
    layer holds (W0 in its stored orientation, b, non-zero lora_A, lora_B, lora_E, ranknum and
    scaling as the constructor sets them: alpha, or r when alpha is 0)."""
    gen = _Generator().manual_seed(seed)
    w0 = (torch.rand(fout, fin, generator=gen, dtype=_float64) * 2 - 1) / math.sqrt(fin)
    state = {
        "config": {"in_features": fin, "out_features": fout, "r": r, "lora_alpha": alpha, "lora_dropout": dropout,
                   "fan_in_fan_out": fifo, "merge_weights": merge, "bias": bias},
        "weight": w0.T.contiguous() if fifo else w0,
        "bias": _randn(fout, generator=gen, dtype=_float64) if bias else None,
    }
    if r > 0:
        state.update({
            "lora_A": _randn(r, fin, generator=gen, dtype=_float64) * 0.5,
            "lora_B": _randn(fout, r, generator=gen, dtype=_float64) * 0.5,
            "lora_E": _randn(r, 1, generator=gen, dtype=_float64),
            "ranknum": float(r) if ranknum is None else float(ranknum),
            "scaling": alpha if alpha > 0 else float(r),
        })
    return state


def inputs(*shape, seed=7):
    return _randn(*shape, generator=_Generator().manual_seed(seed), dtype=_float64)


def base_weight(state):
    """W0 in (out, in) orientation, whatever fan_in_fan_out says."""
    return state["weight"].T if state["config"]["fan_in_fan_out"] else state["weight"]


def base(state, x):
    y = x @ base_weight(state).T
    return y + state["bias"] if state["bias"] is not None else y


def oracle(state, x, A=None, B=None, E=None):
    """x W0^T + b + x (B diag(E) A)^T * scaling / (ranknum + EPS), in float64."""
    y = base(state, x)
    if state["config"]["r"] > 0:
        A = state["lora_A"] if A is None else A
        B = state["lora_B"] if B is None else B
        E = state["lora_E"] if E is None else E
        delta = B @ (E * A)  # B diag(E) A
        y = y + (x @ delta.T) * (state["scaling"] / (state["ranknum"] + EPS))
    return y


def merged_weight(state):
    """The weight as eval() leaves it with merge_weights: W0 plus the scaled update, in the
    stored orientation (the same operations, in float64)."""
    delta = state["lora_B"] @ (state["lora_A"] * state["lora_E"])
    delta = delta.T if state["config"]["fan_in_fan_out"] else delta
    return state["weight"] + delta * state["scaling"] / (torch.tensor([state["ranknum"]], dtype=_float64) + EPS)


def with_values(state, **changes):
    state = dict(state)
    state.update(changes)
    return state


# ------------------------------------------------------------------ probes (run in the candidate)


@probe_helper
def svdlinear_class():
    """In the candidate: SVDLinear, imported as the upstream README's users do (`import
    loralib` after `pip install -e loralib`): loralib/ first on the path."""
    import os
    import sys

    folder = os.path.join(os.getcwd(), "loralib")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    from loralib.adalora import SVDLinear

    return SVDLinear


@probe_helper
def make_layer(state, dtype="float64"):
    """In the candidate: an SVDLinear built by its constructor, holding `state`."""
    SVDLinear = svdlinear_class()
    torch_dtype = getattr(torch, dtype)
    layer = SVDLinear(**state["config"]).to(torch_dtype)
    with torch.no_grad():
        layer.weight.copy_(state["weight"])
        if state["bias"] is not None:
            layer.bias.copy_(state["bias"])
        if state["config"]["r"] > 0:
            layer.lora_A.copy_(state["lora_A"])
            layer.lora_B.copy_(state["lora_B"])
            layer.lora_E.copy_(state["lora_E"])
            layer.ranknum.fill_(state["ranknum"])
            layer.scaling = state["scaling"]
    return layer


@probe_helper
def output(y):
    import torch

    return y.detach() if isinstance(y, torch.Tensor) else y


@probe
def forward_in_mode(state, x, mode, dtype="float64", seeds=None):
    """The layer put in `mode` with its own train()/eval(), called on x (once, or once after
    each torch seed of `seeds`), with its merged flag and weight after."""
    layer = make_layer(state, dtype)
    getattr(layer, mode)()
    x = x.to(getattr(torch, dtype))
    if seeds is None:
        ys = output(layer(x))
    else:
        ys = []
        for seed in seeds:
            torch.manual_seed(seed)
            ys.append(output(layer(x)))
    return {"y": ys, "has_lora_A": hasattr(layer, "lora_A"), "merged": layer.merged, "weight": layer.weight.detach().clone()}


@probe
def forward_sequence(state, x, modes):
    """One layer through `modes` ("train" / "eval", with its own train()/eval()), called on x
    after each."""
    layer = make_layer(state)
    outs = []
    for mode in modes:
        getattr(layer, mode)()
        outs.append(output(layer(x)))
    return outs


@probe
def forward_keeps_the_layer(state, x):
    layer = make_layer(state)
    layer.train()
    before = {n: p.detach().clone() for n, p in layer.named_parameters()}
    layer(x)
    return {
        "merged": layer.merged,
        "unchanged": {n: bool((p.detach() == before[n]).all()) for n, p in layer.named_parameters()},
        "after": {n: p.detach().clone() for n, p in layer.named_parameters()},
    }


@probe
def forward_gradients(state, x, cotangent):
    """d (output . cotangent) / d lora_A, lora_B, lora_E and x, in training mode."""
    layer = make_layer(state)
    layer.train()
    x = x.clone().requires_grad_(True)
    loss = (layer(x) * cotangent).sum()
    return list(torch.autograd.grad(loss, [layer.lora_A, layer.lora_B, layer.lora_E, x]))


# -------------------------------------------------------------------- the SVD-form update


@pytest.mark.parametrize("r,alpha", [(1, 1), (2, 8), (4, 4), (4, 0), (6, 12)])
@pytest.mark.parametrize("fifo", [False, True])
def test_unmerged_output_is_base_plus_scaled_svd_update(r, alpha, fifo):
    state = make_state(fin=7, fout=5, r=r, alpha=alpha, fifo=fifo, seed=r)
    x = inputs(4, 7)
    assert_close(forward_in_mode(state, x, "train")["y"], oracle(state, x), what="output")


@pytest.mark.parametrize("ranknum", [0.5, 2.0, 7.0])
def test_scaling_divides_by_ranknum_not_r(ranknum):
    state = make_state(r=4, alpha=8, ranknum=ranknum, seed=3)
    x = inputs(3, 6)
    assert_close(forward_in_mode(state, x, "train")["y"], oracle(state, x), what="output")


def test_zero_singular_values_leave_the_base_layer():
    # At initialisation lambda = 0: the layer is exactly the pre-trained linear map.
    state = make_state(r=4, seed=5)
    state = with_values(state, lora_E=torch.zeros_like(state["lora_E"]))
    x = inputs(3, 6)
    expected = x @ state["weight"].T + state["bias"]
    assert_close(forward_in_mode(state, x, "train")["y"], expected, rtol=1e-12, atol=1e-14, what="output")


def test_update_is_linear_in_singular_values():
    state = make_state(r=3, seed=11)
    x = inputs(5, 6)
    base_out = x @ state["weight"].T + state["bias"]
    one = forward_in_mode(state, x, "train")["y"] - base_out
    two = forward_in_mode(with_values(state, lora_E=state["lora_E"] * -2.5), x, "train")["y"] - base_out
    assert_close(two, one * -2.5, rtol=1e-9, atol=1e-12, what="update with lambda * -2.5")
    assert_close(one, oracle(state, x) - base_out, rtol=1e-9, atol=1e-12, what="update")


def test_pruned_singular_values_drop_their_triplet():
    # AdaLoRA prunes a triplet by zeroing its lambda: the rest is then a rank r-1 update.
    state = make_state(r=4, alpha=8, seed=13)
    E, A, B = state["lora_E"].clone(), state["lora_A"].clone(), state["lora_B"].clone()
    E[2, 0] = 0.0
    A[2] *= 100.0
    B[:, 2] *= 100.0
    state = with_values(state, lora_E=E, lora_A=A, lora_B=B)
    x = inputs(3, 6)
    keep = [0, 1, 3]
    assert_close(forward_in_mode(state, x, "train")["y"], oracle(state, x, A[keep], B[:, keep], E[keep]), what="output")


# ------------------------------------------------------------------- merged / unmerged


@pytest.mark.parametrize("fifo", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_merged_eval_equals_unmerged(fifo, bias):
    x = inputs(2, 3, 6)
    merged = make_state(r=3, fifo=fifo, bias=bias, dropout=0.2, merge=True, seed=17)
    unmerged = make_state(r=3, fifo=fifo, bias=bias, dropout=0.2, merge=False, seed=17)
    y_merged = forward_in_mode(merged, x, "eval")["y"]  # eval() merges the update into the weight
    y_unmerged = forward_in_mode(unmerged, x, "eval")["y"]  # merge_weights=False: keeps it apart
    assert_close(y_merged, y_unmerged, rtol=1e-9, atol=1e-12, what="merged vs unmerged")
    assert_close(y_unmerged, oracle(unmerged, x), rtol=1e-9, atol=1e-12, what="unmerged output")


def test_merged_layer_does_not_add_the_update_again():
    state = make_state(r=2, alpha=16, seed=19)
    x = inputs(4, 6)
    got = forward_in_mode(state, x, "eval")  # merge_weights=True: the update is now inside layer.weight
    assert got["merged"]
    # With merged weights the forward is the plain linear map of the merged weight.
    expected = x @ merged_weight(state).T + state["bias"]
    assert_close(got["y"], expected, rtol=1e-12, atol=1e-14, what="merged output")


def test_merged_output_equals_the_training_output():
    state = make_state(r=2, alpha=16, seed=19)
    x = inputs(4, 6)
    y_train, y_eval = forward_sequence(state, x, ["train", "eval"])
    assert_close(y_eval, y_train, rtol=1e-9, atol=1e-12, what="eval vs train output")
    assert_close(y_train, oracle(state, x), rtol=1e-9, atol=1e-12, what="train output")


def test_unmerging_restores_the_training_output():
    state = make_state(r=2, alpha=16, seed=19)
    x = inputs(4, 6)
    y_train, _, y_again = forward_sequence(state, x, ["train", "eval", "train"])  # train() subtracts the update again
    assert_close(y_again, y_train, rtol=1e-9, atol=1e-12, what="after unmerging")
    assert_close(y_again, oracle(state, x), rtol=1e-9, atol=1e-12, what="after unmerging")


def test_forward_does_not_merge_or_touch_parameters():
    state = make_state(r=3, seed=23)
    got = forward_keeps_the_layer(state, inputs(2, 6))
    assert not got["merged"]
    for n, same in got["unchanged"].items():
        assert same, "forward changed %s" % n
    for n in ("weight", "bias", "lora_A", "lora_B", "lora_E"):
        assert bool((got["after"][n] == state[n]).all()), "forward changed %s" % n


# -------------------------------------------------------------------------------- r = 0


@pytest.mark.parametrize("fifo", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_rank_zero_is_a_plain_linear_layer(fifo, bias, mode):
    state = make_state(r=0, fifo=fifo, bias=bias, seed=29)
    x = inputs(3, 6)
    got = forward_in_mode(state, x, mode)
    assert not got["has_lora_A"]
    expected = x @ base_weight(state).T
    if bias:
        expected = expected + state["bias"]
    assert_close(got["y"], expected, rtol=1e-12, atol=1e-14, what="output")


# ------------------------------------------------------------------------------ dropout


def test_dropout_applies_to_the_update_branch_only():
    state = make_state(r=3, alpha=4, dropout=0.5, seed=31)
    x = inputs(8, 6)
    (y,) = forward_in_mode(state, x, "train", seeds=[99])["y"]
    torch.manual_seed(99)
    dropped = torch.nn.functional.dropout(x, 0.5, training=True)  # the draw the forward made after the same seed
    assert bool((dropped == 0).any()), "the seed should drop something"
    update = oracle(state, dropped) - base(state, dropped)
    assert_close(y, base(state, x) + update, rtol=1e-9, atol=1e-12, what="output with dropout")


def test_dropout_is_inactive_in_eval_mode_without_merging():
    state = make_state(r=3, dropout=0.9, merge=False, seed=37)
    x = inputs(5, 6)
    assert_close(forward_in_mode(state, x, "eval")["y"], oracle(state, x), what="output")


def test_dropout_never_touches_the_base_branch():
    state = make_state(r=3, dropout=0.7, seed=41)
    state = with_values(state, lora_E=torch.zeros_like(state["lora_E"]))
    x = inputs(6, 6)
    expected = x @ state["weight"].T + state["bias"]
    for seed, y in enumerate(forward_in_mode(state, x, "train", seeds=[0, 1, 2])["y"]):
        assert_close(y, expected, rtol=1e-12, atol=1e-14, what="output (seed %d)" % seed)


# ------------------------------------------------------------------------------- shapes


@pytest.mark.parametrize("shape", [(6,), (1, 6), (5, 6), (2, 3, 6), (2, 1, 4, 6)])
@pytest.mark.parametrize("fifo", [False, True])
def test_any_leading_batch_shape(shape, fifo):
    state = make_state(r=2, fifo=fifo, seed=43)
    x = inputs(*shape)
    assert_close(forward_in_mode(state, x, "train")["y"], oracle(state, x), what="output")  # shape (..., out_features) first


def test_float32_layer_returns_float32():
    state = make_state(r=2, seed=47)
    y = forward_in_mode(state, inputs(3, 6), "train", dtype="float32")["y"]
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32


def test_float32_layer_computes_the_svd_form():
    state = make_state(r=2, seed=47)
    y = forward_in_mode(state, inputs(3, 6), "train", dtype="float32")["y"]
    # the oracle in float64 on the float32 values the layer holds
    as_float32 = {k: (v.float().double() if isinstance(v, torch.Tensor) else v) for k, v in state.items()}
    assert_close(y.double(), oracle(as_float32, inputs(3, 6).float().double()), rtol=1e-5, atol=1e-5, what="float32 output")


# ---------------------------------------------------------------------------- gradients


@pytest.mark.parametrize("fifo", [False, True])
def test_gradients_follow_the_svd_form(fifo):
    state = make_state(r=3, alpha=6, fifo=fifo, seed=53)
    x = inputs(4, 6)
    w = inputs(4, 5, seed=8)  # a random cotangent
    gA, gB, gE, gx = forward_gradients(state, x, w)

    A = state["lora_A"].clone().requires_grad_(True)
    B = state["lora_B"].clone().requires_grad_(True)
    E = state["lora_E"].clone().requires_grad_(True)
    x2 = x.clone().requires_grad_(True)
    eA, eB, eE, ex = _grad((oracle(state, x2, A, B, E) * w).sum(), [A, B, E, x2])
    assert_close(gA, eA, rtol=1e-9, atol=1e-12, what="d/d lora_A")
    assert_close(gB, eB, rtol=1e-9, atol=1e-12, what="d/d lora_B")
    assert_close(gE, eE, rtol=1e-9, atol=1e-12, what="d/d lora_E")
    assert_close(gx, ex, rtol=1e-9, atol=1e-12, what="d/d x")
