"""Driver for `lmr record` (ours): calls `naive_nsa` the way NSA's selection and sliding
branches are called, on tiny seeded inputs.

`lmr record` runs this from the root of the upstream tree after tests/conftest.py has
registered the two packages without their initialisers (see that file), with random,
numpy.random and torch seeded; the seed is set again here so the file stands alone.

Block indices are made as a real selection step makes them: for each token and key/value
head, distinct blocks that start at or before the token, always including the token's own
block, the rest of the S slots padded (with -1, as naive_nsa_with_compression pads, or with
a block index past the sequence, as the upstream tests pad after sorting).
"""
import torch

from native_sparse_attention.ops.naive import naive_nsa

torch.manual_seed(0)


def make_block_indices(B, T, H, S, block_size, pad=-1, counts=None, head_first=False):
    """[B, T, H, S] (or [B, H, T, S]) block indices, each token's own block among the first slots."""
    out = torch.full((B, T, H, S), pad, dtype=torch.long)
    for b in range(B):
        for t in range(T):
            own = t // block_size
            for h in range(H):
                n = S if counts is None else int(counts[b, t, h])
                others = torch.randperm(own)[: max(0, min(n, own + 1) - 1)].tolist() if own > 0 else []
                chosen = [own] + others
                order = torch.randperm(len(chosen)).tolist()
                chosen = [chosen[i] for i in order]
                out[b, t, h, : len(chosen)] = torch.tensor(chosen)
                # slots past the count hold blocks a caller may leave there: they must not count
                for s in range(len(chosen), S):
                    if counts is not None and s >= n and own > 0 and s % 2 == 0:
                        out[b, t, h, s] = int(torch.randint(0, own + 1, ()))
    if head_first:
        out = out.transpose(1, 2).contiguous()
    return out


def make_inputs(B, T, HQ, H, K, V, dtype=torch.float32, head_first=False):
    def lay(x):
        return x.transpose(1, 2).contiguous() if head_first else x
    q = lay(torch.randn(B, T, HQ, K, dtype=dtype))
    k = lay(torch.randn(B, T, H, K, dtype=dtype))
    v = lay(torch.randn(B, T, H, V, dtype=dtype))
    g_slc = lay(torch.sigmoid(torch.randn(B, T, HQ, dtype=dtype)).unsqueeze(-1)).squeeze(-1)
    g_swa = lay(torch.sigmoid(torch.randn(B, T, HQ, dtype=dtype)).unsqueeze(-1)).squeeze(-1)
    return q, k, v, g_slc, g_swa


# 1. selection only (window 0), block_counts None: every slot counts, -1 padding
q, k, v, g_slc, g_swa = make_inputs(2, 32, 2, 1, 8, 8)
idx = make_block_indices(2, 32, 1, 3, 8)
naive_nsa(q, k, v, g_slc, g_swa, idx, block_size=8)

# 2. both branches, per-token block_counts, T not a multiple of the block size, V != K,
#    sentinel padding past the last block, explicit scale
B, T, HQ, H, S, BS = 1, 37, 4, 2, 3, 8
q, k, v, g_slc, g_swa = make_inputs(B, T, HQ, H, 8, 6)
counts = torch.randint(1, S + 1, (B, T, H))
idx = make_block_indices(B, T, H, S, BS, pad=T, counts=counts)
naive_nsa(q, k, v, g_slc, g_swa, idx, block_counts=counts, block_size=BS, window_size=8, scale=0.2)

# 3. an int block_counts smaller than S: the slots past it are ignored
B, T, HQ, H, S, BS = 2, 24, 4, 1, 4, 4
q, k, v, g_slc, g_swa = make_inputs(B, T, HQ, H, 8, 8)
counts_full = torch.full((B, T, H), 2, dtype=torch.long)
idx = make_block_indices(B, T, H, S, BS, counts=counts_full)
naive_nsa(q, k, v, g_slc, g_swa, idx, block_counts=2, block_size=BS, window_size=16)

# 4. head-first layout, with a window and per-token counts
B, T, HQ, H, S, BS = 2, 20, 4, 2, 2, 4
q, k, v, g_slc, g_swa = make_inputs(B, T, HQ, H, 8, 8, head_first=True)
counts = torch.randint(1, S + 1, (B, T, H))
idx = make_block_indices(B, T, H, S, BS, counts=counts, head_first=True)
naive_nsa(q, k, v, g_slc, g_swa, idx, block_counts=counts.transpose(1, 2).contiguous(),
          block_size=BS, window_size=4, head_first=True)

# 5. variable lengths: three sequences packed in one row, indices relative to each start
lens = [13, 17, 18]
T, HQ, H, S, BS = sum(lens), 2, 1, 3, 8
cu = torch.tensor([0, 13, 30, 48], dtype=torch.long)
q, k, v, g_slc, g_swa = make_inputs(1, T, HQ, H, 8, 8)
counts = torch.randint(1, S + 1, (1, T, H))
idx = torch.cat([make_block_indices(1, n, H, S, BS, counts=counts[:, a:a + n])
                 for a, n in zip(cu[:-1].tolist(), lens)], dim=1)
naive_nsa(q, k, v, g_slc, g_swa, idx, block_counts=counts, block_size=BS, window_size=6, cu_seqlens=cu)

# 6. float64 inputs give float64 outputs
q, k, v, g_slc, g_swa = make_inputs(1, 16, 2, 1, 4, 4, dtype=torch.float64)
idx = make_block_indices(1, 16, 1, 2, 4)
naive_nsa(q, k, v, g_slc, g_swa, idx, block_size=4, window_size=3)

# 7. the GQA ratio the kernels need (16 query heads per key/value head)
q, k, v, g_slc, g_swa = make_inputs(1, 16, 16, 1, 4, 4)
idx = make_block_indices(1, 16, 1, 2, 4)
naive_nsa(q, k, v, g_slc, g_swa, idx, block_size=4, window_size=4)

# 8. one token
q, k, v, g_slc, g_swa = make_inputs(2, 1, 2, 1, 8, 8)
idx = make_block_indices(2, 1, 1, 1, 8)
naive_nsa(q, k, v, g_slc, g_swa, idx, block_size=8, window_size=2)

# 9. a block longer than the sequence: the one block is the whole causal prefix
q, k, v, g_slc, g_swa = make_inputs(1, 20, 2, 2, 8, 8)
idx = make_block_indices(1, 20, 2, 1, 64)
naive_nsa(q, k, v, g_slc, g_swa, idx, block_size=64, window_size=0)

# 10. the defaults: block_size 64, no window, scale None, on 70 tokens (two blocks)
q, k, v, g_slc, g_swa = make_inputs(1, 70, 2, 1, 4, 4)
idx = make_block_indices(1, 70, 1, 2, 64)
naive_nsa(q, k, v, g_slc, g_swa, idx)
