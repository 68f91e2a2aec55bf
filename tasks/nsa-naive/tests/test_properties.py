"""Property tests for `naive_nsa` (ours): NSA's selected-block and sliding-window branches,
checked against the paper's definitions (Section 3.2 and 3.3 of arXiv 2502.11089v2).

The oracle below is written from the definitions, not from the upstream code: for every
query token and query head it builds the set of keys each branch attends to (the tokens of
the counted, selected blocks that are not in the future; the last `window_size` tokens up
to and including the query), runs plain softmax attention over that set in float64 and
sums the branches weighted by their gates.

`naive_nsa` runs in the candidate process (lmr_bridge): `naive_nsa(...)` below sends the
inputs this file chose there and gets the output back as a plain tensor; the gradients and
the check that the inputs are left alone run there as probes. Every expected value is
computed in this process. A few tests compare two outputs of the code with each other (a
relation the definition implies: linearity in the gates, causality, invariance under the
order of the slots, ...); each of them also compares an output with the oracle, so no test
rests on the candidate's outputs alone.
"""
import math

import pytest
import torch
from lmr_bridge import candidate, probe

naive_nsa = candidate.function("native_sparse_attention.ops.naive:naive_nsa")

ATOL = 1e-5
RTOL = 1e-5


def assert_close(actual, expected, atol=ATOL, rtol=RTOL):
    assert isinstance(actual, torch.Tensor), f"expected a tensor, got {type(actual).__name__}"
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    a, e = actual.detach().double(), expected.detach().double()
    assert torch.isfinite(a).all(), "non-finite values in the output"
    diff = (a - e).abs()
    bound = atol + rtol * e.abs()
    assert bool((diff <= bound).all()), f"max abs difference {diff.max().item():.3e} (atol {atol}, rtol {rtol})"


# ----------------------------------------------------------------------------- inputs


def block_indices_for(B, T, H, S, block_size, gen, counts=None, pad=-1, every_block=False):
    """Distinct, non-future blocks per token and kv head, the token's own block always among them."""
    out = torch.full((B, T, H, S), pad, dtype=torch.long)
    for b in range(B):
        for t in range(T):
            own = t // block_size
            for h in range(H):
                n = S if counts is None else int(counts[b, t, h])
                if every_block:
                    chosen = list(range(own + 1))
                else:
                    others = torch.randperm(own, generator=gen)[: max(0, min(n, own + 1) - 1)].tolist() if own else []
                    chosen = [own] + others
                perm = torch.randperm(len(chosen), generator=gen).tolist()
                out[b, t, h, : len(chosen)] = torch.tensor([chosen[i] for i in perm])
    return out


def make_case(B=2, T=24, HQ=4, H=2, K=8, V=8, S=3, block_size=4, seed=0, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(B, T, HQ, K, generator=gen, dtype=dtype)
    k = torch.randn(B, T, H, K, generator=gen, dtype=dtype)
    v = torch.randn(B, T, H, V, generator=gen, dtype=dtype)
    g_slc = torch.rand(B, T, HQ, generator=gen, dtype=dtype)
    g_swa = torch.rand(B, T, HQ, generator=gen, dtype=dtype)
    counts = torch.randint(1, S + 1, (B, T, H), generator=gen)
    idx = block_indices_for(B, T, H, S, block_size, gen, counts=counts)
    return dict(q=q, k=k, v=v, g_slc=g_slc, g_swa=g_swa, block_indices=idx, block_counts=counts,
                block_size=block_size)


# ----------------------------------------------------------------------------- oracle


def _attend(q, k, v, allowed, scale):
    """q [T, HQ, K], k/v [T, HQ, *] (already per query head), allowed [T, HQ, T] -> [T, HQ, V]."""
    logits = torch.einsum("thd,jhd->thj", q, k) * scale
    logits = logits.masked_fill(~allowed, float("-inf"))
    w = torch.softmax(logits, dim=-1)
    return torch.einsum("thj,jhv->thv", w, v)


def oracle(q, k, v, g_slc, g_swa, block_indices, block_counts=None, block_size=64, window_size=0, scale=None):
    """Sequence-first, one sequence per batch row; float64."""
    q, k, v, g_slc, g_swa = (x.double() for x in (q, k, v, g_slc, g_swa))
    B, T, HQ, K = q.shape
    H, S = k.shape[2], block_indices.shape[-1]
    G = HQ // H
    scale = K ** -0.5 if scale is None else scale
    pos = torch.arange(T)
    out = torch.zeros(B, T, HQ, v.shape[-1], dtype=torch.float64)
    for b in range(B):
        kq = k[b].repeat_interleave(G, dim=1)
        vq = v[b].repeat_interleave(G, dim=1)
        sel = torch.zeros(T, HQ, T, dtype=torch.bool)
        for t in range(T):
            for hq in range(HQ):
                h = hq // G
                if block_counts is None:
                    n = S
                elif isinstance(block_counts, int):
                    n = block_counts
                else:
                    n = int(block_counts[b, t, h])
                for s in range(n):
                    blk = int(block_indices[b, t, h, s])
                    if blk >= 0:
                        sel[t, hq] |= (pos // block_size == blk) & (pos <= t)
        o = _attend(q[b], kq, vq, sel, scale) * g_slc[b].unsqueeze(-1)
        if window_size > 0:
            win = (pos[None, :] <= pos[:, None]) & (pos[None, :] > pos[:, None] - window_size)
            win = win[:, None, :].expand(T, HQ, T)
            o = o + _attend(q[b], kq, vq, win, scale) * g_swa[b].unsqueeze(-1)
        out[b] = o
    return out


def full_causal(q, k, v, scale=None):
    B, T, HQ, K = q.shape
    G = HQ // k.shape[2]
    scale = K ** -0.5 if scale is None else scale
    pos = torch.arange(T)
    causal = (pos[None, :] <= pos[:, None])[:, None, :].expand(T, HQ, T)
    return torch.stack([
        _attend(q[b].double(), k[b].double().repeat_interleave(G, 1), v[b].double().repeat_interleave(G, 1), causal, scale)
        for b in range(B)
    ])


# ----------------------------------------------------------------------------- shapes and dtypes


def test_output_shape_is_queries_by_value_dim():
    case = make_case(B=2, T=12, HQ=4, H=2, K=8, V=5, block_size=4)
    out = naive_nsa(**case, window_size=3)
    assert tuple(out.shape) == (2, 12, 4, 5)


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_output_dtype_follows_the_inputs(dtype):
    case = make_case(B=1, T=8, HQ=2, H=1, K=4, V=4, block_size=4, dtype=dtype)
    out = naive_nsa(**case, window_size=2)
    assert out.dtype == dtype
    assert_close(out, oracle(**case, window_size=2), atol=3e-2, rtol=3e-2)


# ----------------------------------------------------------------------------- the branches


def test_selected_branch_matches_the_definition():
    case = make_case(B=2, T=24, HQ=4, H=2, S=3, block_size=4, seed=1)
    assert_close(naive_nsa(**case, window_size=0), oracle(**case, window_size=0))


def test_sliding_branch_matches_the_definition():
    case = make_case(B=2, T=20, HQ=2, H=1, S=2, block_size=4, seed=2)
    case["g_slc"] = torch.zeros_like(case["g_slc"])
    assert_close(naive_nsa(**case, window_size=5), oracle(**case, window_size=5))


def test_both_branches_with_explicit_scale_match_the_definition():
    case = make_case(B=1, T=29, HQ=4, H=1, K=8, V=6, S=3, block_size=8, seed=3)
    assert_close(naive_nsa(**case, window_size=7, scale=0.3), oracle(**case, window_size=7, scale=0.3))


def test_selecting_every_block_is_full_causal_attention():
    gen = torch.Generator().manual_seed(4)
    B, T, HQ, H, BS = 2, 24, 2, 1, 4
    case = make_case(B=B, T=T, HQ=HQ, H=H, block_size=BS, seed=4)
    S = math.ceil(T / BS)
    case["block_indices"] = block_indices_for(B, T, H, S, BS, gen, every_block=True)
    case["block_counts"] = None
    case["g_slc"] = torch.ones_like(case["g_slc"])
    assert_close(naive_nsa(**case, window_size=0), full_causal(case["q"], case["k"], case["v"]))


def test_window_covering_the_sequence_is_full_causal_attention():
    case = make_case(B=2, T=16, HQ=4, H=2, block_size=4, seed=5)
    case["g_slc"] = torch.zeros_like(case["g_slc"])
    case["g_swa"] = torch.ones_like(case["g_swa"])
    assert_close(naive_nsa(**case, window_size=16), full_causal(case["q"], case["k"], case["v"]))


def test_a_window_of_one_returns_each_tokens_own_value():
    case = make_case(B=1, T=10, HQ=2, H=1, block_size=4, seed=6)
    case["g_slc"] = torch.zeros_like(case["g_slc"])
    case["g_swa"] = torch.ones_like(case["g_swa"])
    out = naive_nsa(**case, window_size=1)
    assert_close(out, case["v"].repeat_interleave(2, dim=2))


# ----------------------------------------------------------------------------- gates


def test_gates_weight_and_sum_the_two_branches():
    case = make_case(B=1, T=16, HQ=2, H=1, block_size=4, seed=7)
    ones, zeros = torch.ones_like(case["g_slc"]), torch.zeros_like(case["g_slc"])
    o_slc = naive_nsa(**{**case, "g_slc": ones, "g_swa": zeros}, window_size=3)
    o_swa = naive_nsa(**{**case, "g_slc": zeros, "g_swa": ones}, window_size=3)
    both = naive_nsa(**case, window_size=3)
    expected = case["g_slc"].unsqueeze(-1) * o_slc + case["g_swa"].unsqueeze(-1) * o_swa
    assert_close(both, expected)
    # anchored: the combination is the oracle's, not only consistent with the code's own branches
    assert_close(both, oracle(**case, window_size=3))


def test_zero_gates_give_a_zero_output():
    case = make_case(B=1, T=12, HQ=2, H=1, block_size=4, seed=8)
    case["g_slc"] = torch.zeros_like(case["g_slc"])
    case["g_swa"] = torch.zeros_like(case["g_swa"])
    out = naive_nsa(**case, window_size=4)
    assert_close(out, torch.zeros(1, 12, 2, 8))


def test_window_size_zero_ignores_the_sliding_gate():
    case = make_case(B=1, T=12, HQ=2, H=1, block_size=4, seed=9)
    a = naive_nsa(**case, window_size=0)
    b = naive_nsa(**{**case, "g_swa": case["g_swa"] * 5.0 + 1.0}, window_size=0)
    assert_close(a, b, atol=0.0, rtol=0.0)
    assert_close(a, oracle(**case, window_size=0))


# ----------------------------------------------------------------------------- causality


def test_future_tokens_do_not_change_earlier_outputs():
    case = make_case(B=1, T=20, HQ=2, H=1, block_size=4, seed=10)
    t0 = 11
    gen = torch.Generator().manual_seed(11)
    changed = dict(case)
    for name in ("q", "k", "v", "g_slc", "g_swa"):
        x = case[name].clone()
        x[:, t0 + 1:] = torch.randn(x[:, t0 + 1:].shape, generator=gen)
        changed[name] = x
    a = naive_nsa(**case, window_size=6)
    b = naive_nsa(**changed, window_size=6)
    assert_close(b[:, : t0 + 1], a[:, : t0 + 1], atol=0.0, rtol=0.0)
    assert_close(b, oracle(**changed, window_size=6))


def test_selected_blocks_are_masked_causally_inside_the_own_block():
    # only the token's own block selected: it attends to the tokens of that block up to itself
    B, T, HQ, H, BS = 1, 12, 2, 1, 4
    case = make_case(B=B, T=T, HQ=HQ, H=H, block_size=BS, seed=12)
    idx = (torch.arange(T) // BS).view(1, T, 1, 1).expand(B, T, H, 1).contiguous()
    case.update(block_indices=idx, block_counts=None, g_slc=torch.ones(B, T, HQ))
    out = naive_nsa(**case, window_size=0)
    # the first token of each block sees only itself
    for t in range(0, T, BS):
        assert_close(out[:, t], case["v"][:, t].repeat_interleave(HQ // H, dim=1))


# ----------------------------------------------------------------------------- block indices and counts


def test_slots_past_the_block_count_are_ignored():
    case = make_case(B=1, T=24, HQ=2, H=1, S=4, block_size=4, seed=13)
    a = naive_nsa(**case, window_size=0)
    idx = case["block_indices"].clone()
    gen = torch.Generator().manual_seed(14)
    for t in range(24):
        n = int(case["block_counts"][0, t, 0])
        idx[0, t, 0, n:] = torch.randint(0, t // 4 + 1, (4 - n,), generator=gen)
    b = naive_nsa(**{**case, "block_indices": idx}, window_size=0)
    assert_close(b, a)
    assert_close(b, oracle(**case, window_size=0))


def test_an_int_block_count_equals_the_same_count_for_every_token():
    case = make_case(B=2, T=16, HQ=2, H=1, S=3, block_size=4, seed=15)
    a = naive_nsa(**{**case, "block_counts": 2}, window_size=0)
    b = naive_nsa(**{**case, "block_counts": torch.full_like(case["block_counts"], 2)}, window_size=0)
    assert_close(a, b)
    assert_close(a, oracle(**{**case, "block_counts": 2}, window_size=0))


def test_block_counts_none_uses_every_slot():
    case = make_case(B=1, T=16, HQ=2, H=1, S=3, block_size=4, seed=16)
    a = naive_nsa(**{**case, "block_counts": None}, window_size=0)
    b = naive_nsa(**{**case, "block_counts": torch.full_like(case["block_counts"], 3)}, window_size=0)
    assert_close(a, b)
    assert_close(a, oracle(**{**case, "block_counts": None}, window_size=0))


def test_the_order_of_the_selected_blocks_does_not_matter():
    case = make_case(B=1, T=24, HQ=2, H=1, S=3, block_size=4, seed=17)
    case["block_counts"] = None
    idx = case["block_indices"]
    flipped = idx.flip(-1)
    a = naive_nsa(**case, window_size=0)
    b = naive_nsa(**{**case, "block_indices": flipped}, window_size=0)
    assert_close(b, a)
    assert_close(b, oracle(**case, window_size=0))


def test_padding_with_minus_one_or_a_block_past_the_end_is_the_same():
    case = make_case(B=1, T=20, HQ=2, H=1, S=3, block_size=4, seed=18)
    case["block_counts"] = None
    idx = case["block_indices"]
    sentinel = idx.masked_fill(idx < 0, 20)
    a = naive_nsa(**case, window_size=0)
    b = naive_nsa(**{**case, "block_indices": sentinel}, window_size=0)
    assert_close(b, a)
    assert_close(b, oracle(**case, window_size=0))


def test_query_heads_use_their_groups_key_value_head():
    case = make_case(B=1, T=12, HQ=4, H=2, block_size=4, seed=19)
    a = naive_nsa(**case, window_size=3)
    k, v = case["k"].clone(), case["v"].clone()
    k[:, :, 1] += 1.0
    v[:, :, 1] -= 2.0
    b = naive_nsa(**{**case, "k": k, "v": v}, window_size=3)
    assert_close(b[:, :, :2], a[:, :, :2], atol=0.0, rtol=0.0)
    assert not torch.allclose(b[:, :, 2:], a[:, :, 2:])
    assert_close(b, oracle(**{**case, "k": k, "v": v}, window_size=3))


# ----------------------------------------------------------------------------- options


def test_default_scale_is_one_over_sqrt_head_dim():
    case = make_case(B=1, T=12, HQ=2, H=1, K=16, V=4, block_size=4, seed=20)
    assert_close(naive_nsa(**case, window_size=3), naive_nsa(**case, window_size=3, scale=0.25))
    assert_close(naive_nsa(**case, window_size=3), oracle(**case, window_size=3, scale=0.25))


def test_head_first_is_the_transposed_layout():
    case = make_case(B=2, T=12, HQ=4, H=2, block_size=4, seed=21)
    a = naive_nsa(**case, window_size=3)
    hf = {name: (x.transpose(1, 2).contiguous() if isinstance(x, torch.Tensor) else x) for name, x in case.items()}
    b = naive_nsa(**hf, window_size=3, head_first=True)
    assert_close(b, a.transpose(1, 2))
    assert_close(b, oracle(**case, window_size=3).transpose(1, 2))


def test_variable_lengths_equal_separate_sequences():
    lens = [7, 12, 9]
    parts = [make_case(B=1, T=n, HQ=2, H=1, S=2, block_size=4, seed=30 + i) for i, n in enumerate(lens)]
    packed = {name: torch.cat([p[name] for p in parts], dim=1) for name in
              ("q", "k", "v", "g_slc", "g_swa", "block_indices", "block_counts")}
    cu = torch.tensor([0, 7, 19, 28], dtype=torch.long)
    out = naive_nsa(**packed, block_size=4, window_size=5, cu_seqlens=cu)
    expected = torch.cat([naive_nsa(**p, window_size=5) for p in parts], dim=1)
    assert_close(out, expected)
    assert_close(out, torch.cat([oracle(**p, window_size=5) for p in parts], dim=1))


# ----------------------------------------------------------------------------- autograd and purity


@probe
def nsa_gradients(case, names, weight, window_size):
    """In the candidate: the gradients of sum(naive_nsa(...) * weight) with respect to the
    inputs `names` (None for an input the output does not depend on)."""
    import torch
    from native_sparse_attention.ops.naive import naive_nsa as nsa

    leaves = {n: case[n].clone().requires_grad_(True) for n in names}
    out = nsa(**{**case, **leaves}, window_size=window_size)
    grads = torch.autograd.grad((out * weight).sum(), [leaves[n] for n in names], allow_unused=True)
    return list(grads)


@probe
def inputs_after_a_call(case, window_size):
    """In the candidate: the argument tensors as they are after one call."""
    from native_sparse_attention.ops.naive import naive_nsa as nsa

    nsa(**case, window_size=window_size)
    return case


def test_gradients_match_the_definition():
    case = make_case(B=1, T=12, HQ=2, H=1, block_size=4, seed=40, dtype=torch.float32)
    names = ("q", "k", "v", "g_slc", "g_swa")
    B, T, HQ, V = case["q"].shape[0], case["q"].shape[1], case["q"].shape[2], case["v"].shape[-1]
    w = torch.randn((B, T, HQ, V), generator=torch.Generator().manual_seed(41))
    grads = nsa_gradients(case, list(names), w, 3)
    assert isinstance(grads, list) and len(grads) == len(names), f"expected {len(names)} gradients, got {grads!r:.200}"
    ref_leaves = {n: case[n].double().clone().requires_grad_(True) for n in names}
    ref = oracle(**{**case, **ref_leaves}, window_size=3)
    ref_grads = torch.autograd.grad((ref * w.double()).sum(), [ref_leaves[n] for n in names])
    for n, g, r in zip(names, grads, ref_grads):
        assert g is not None, f"no gradient for {n}"
        assert_close(g, r, atol=1e-4, rtol=1e-4)


def test_inputs_are_left_unchanged():
    # rests on the candidate's report of its own arguments (a claim); the outputs themselves
    # are anchored to the oracle by the tests above
    case = make_case(B=1, T=12, HQ=2, H=1, block_size=4, seed=42)
    before = {n: (x.clone() if isinstance(x, torch.Tensor) else x) for n, x in case.items()}
    after = inputs_after_a_call(case, 3)
    for n, x in before.items():
        if isinstance(x, torch.Tensor):
            assert isinstance(after[n], torch.Tensor) and torch.equal(after[n], x), f"{n} was modified"
