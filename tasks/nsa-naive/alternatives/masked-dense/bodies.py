# Alternative 'masked-dense': all queries at once. The selected blocks are scattered
# into a per-(token, kv-head) block membership table, gathered back to a dense
# [query, key] boolean mask (causal, same-sequence), and used in a masked softmax
# over dense logits; the sliding window is another dense mask.

# lmr-body: native_sparse_attention/ops/naive.py::naive_nsa
    if scale is None:
        scale = q.shape[-1] ** -0.5
    if cu_seqlens is not None:
        if head_first:
            raise RuntimeError("Sequences with variable lengths are not supported for head-first mode")
        if q.shape[0] != 1:
            raise ValueError("batch size must be 1 when cu_seqlens are provided")
    use_swa = window_size is not None and window_size > 0
    if isinstance(block_counts, torch.Tensor) and block_counts.dim() == 0:
        block_counts = int(block_counts.item())
    if head_first:
        q, k, v = (rearrange(x, 'b h t d -> b t h d') for x in (q, k, v))
        g_slc = rearrange(g_slc, 'b h t -> b t h')
        if use_swa:
            g_swa = rearrange(g_swa, 'b h t -> b t h')
        block_indices = rearrange(block_indices, 'b h t s -> b t h s')
        if isinstance(block_counts, torch.Tensor):
            block_counts = rearrange(block_counts, 'b h t -> b t h')

    out_dtype = q.dtype
    cdt = torch.float64 if torch.float64 in (q.dtype, k.dtype, v.dtype) else torch.float32
    B, T, HQ, _ = q.shape
    H = k.shape[2]
    G = HQ // H
    S = block_indices.shape[-1]
    BS = block_size
    dev = q.device

    qf, kf, vf = q.to(cdt), k.to(cdt), v.to(cdt)
    pos = torch.arange(T, device=dev)
    if cu_seqlens is None:
        seq_id = torch.zeros(T, dtype=torch.long, device=dev)
        bos = torch.zeros(T, dtype=torch.long, device=dev)
    else:
        cu = cu_seqlens.to(device=dev, dtype=torch.long)
        seq_id = torch.searchsorted(cu[1:].contiguous(), pos, right=True)
        bos = cu[seq_id.clamp(max=cu.numel() - 1)]
    local = pos - bos
    key_blk = local // BS                                   # local block of each key position
    NB = max(1, (T + BS - 1) // BS)

    # which slots count
    slot = torch.arange(S, device=dev)
    if block_counts is None:
        counted = torch.ones(B, T, H, S, dtype=torch.bool, device=dev)
    elif isinstance(block_counts, int):
        counted = (slot < block_counts).expand(B, T, H, S)
    else:
        counted = slot < block_counts.to(device=dev, dtype=torch.long)[..., None]
    idx = block_indices.to(device=dev, dtype=torch.long)
    valid = counted & (idx >= 0) & (idx < NB)
    idx = torch.where(valid, idx, torch.full_like(idx, NB))  # invalid slots go to a dump column
    member = torch.zeros(B, T, H, NB + 1, dtype=torch.bool, device=dev)
    member.scatter_(-1, idx, torch.ones_like(idx, dtype=torch.bool))
    member = member[..., :NB]
    tok_sel = member[..., key_blk]                          # [B, T, H, Tk]

    same_seq = seq_id[:, None] == seq_id[None, :]
    causal = pos[None, :] <= pos[:, None]
    base = same_seq & causal                                # [T, Tk]
    m_slc = tok_sel & base[None, :, None, :]
    m_slc = m_slc.repeat_interleave(G, dim=2)               # [B, T, HQ, Tk]

    k_e = kf.repeat_interleave(G, dim=2)                    # query head i -> kv head i // G
    v_e = vf.repeat_interleave(G, dim=2)
    logits = torch.einsum('bqhd,bkhd->bqhk', qf, k_e) * scale

    def masked_attn(mask):
        s = logits.masked_fill(~mask, float('-inf'))
        empty = ~mask.any(-1, keepdim=True)
        s = s.masked_fill(empty, 0.0)
        p = torch.softmax(s, dim=-1).masked_fill(~mask, 0.0)
        return torch.einsum('bqhk,bkhd->bqhd', p, v_e)

    o = masked_attn(m_slc) * g_slc.to(cdt)[..., None]
    if use_swa:
        win = base & (pos[None, :] > pos[:, None] - window_size)
        m_swa = win[None, :, None, :].expand(B, T, HQ, T)
        o = o + masked_attn(m_swa) * g_swa.to(cdt)[..., None]

    o = o.to(out_dtype)
    if head_first:
        o = rearrange(o, 'b t h d -> b h t d')
    return o
