# Alternative 'explicit-loops': python loops over sequences (batch rows or cu_seqlens
# segments), query positions and key/value heads; for each one the union of the
# counted selected blocks is turned into an explicit list of key positions <= t,
# gathered, and attended with a plain softmax (all query heads of the group at once).

# lmr-body: native_sparse_attention/ops/naive.py::naive_nsa
    if scale is None:
        scale = q.shape[-1] ** -0.5
    if cu_seqlens is not None:
        if head_first:
            raise RuntimeError("Sequences with variable lengths are not supported for head-first mode")
        assert q.shape[0] == 1, "batch size must be 1 when cu_seqlens are provided"
    use_swa = window_size is not None and window_size > 0
    if head_first:
        q = q.transpose(1, 2)
        k = k.transpose(1, 2)
        v = v.transpose(1, 2)
        g_slc = g_slc.transpose(1, 2)
        if use_swa:
            g_swa = g_swa.transpose(1, 2)
        block_indices = block_indices.transpose(1, 2)
        if isinstance(block_counts, torch.Tensor) and block_counts.dim() == 3:
            block_counts = block_counts.transpose(1, 2)

    out_dtype = q.dtype
    wide = any(x.dtype == torch.float64 for x in (q, k, v))
    cdt = torch.float64 if wide else torch.float32
    B, T, HQ = q.shape[:3]
    H = k.shape[2]
    G = HQ // H
    S = block_indices.shape[-1]
    BS = block_size
    dev = q.device
    qf = q.to(cdt)
    kf = k.to(cdt)
    vf = v.to(cdt)
    gs = g_slc.to(cdt)
    gw = g_swa.to(cdt) if use_swa else None

    bi = block_indices.tolist()
    if block_counts is None:
        cnt = None
        n_all = S
    elif isinstance(block_counts, torch.Tensor) and block_counts.dim() > 0:
        cnt = block_counts.tolist()
        n_all = None
    else:
        cnt = None
        n_all = int(block_counts)

    if cu_seqlens is None:
        segments = [(b, 0, T) for b in range(B)]
    else:
        c = [int(x) for x in cu_seqlens.tolist()]
        segments = [(0, c[i], c[i + 1]) for i in range(len(c) - 1)]

    def attend(qh, kk, vv):
        # qh [G, K], kk [n, K], vv [n, V]
        s = (qh @ kk.transpose(0, 1)) * scale
        return torch.softmax(s, dim=-1) @ vv

    rows = [[None] * T for _ in range(B)]
    Vd = vf.shape[-1]
    for b, start, end in segments:
        if end <= start:
            continue
        # split once per sequence so that autograd keeps one node per split, not per access
        q_rows = qf[b, start:end].unbind(0)                 # T_seq x [HQ, K]
        k_heads = kf[b, start:end].unbind(1)                # H x [T_seq, K]
        v_heads = vf[b, start:end].unbind(1)                # H x [T_seq, V]
        gs_rows = gs[b, start:end].unbind(0)                # T_seq x [HQ]
        gw_rows = gw[b, start:end].unbind(0) if use_swa else None
        for lt in range(end - start):
            t = start + lt
            q_groups = q_rows[lt].reshape(H, G, -1).unbind(0)
            gs_groups = gs_rows[lt].reshape(H, G, 1).unbind(0)
            gw_groups = gw_rows[lt].reshape(H, G, 1).unbind(0) if use_swa else None
            heads = []
            for h in range(H):
                n = cnt[b][t][h] if cnt is not None else n_all
                chosen = set()
                for j in bi[b][t][h][:max(0, n)]:
                    if j >= 0 and j * BS <= lt:
                        chosen.add(j)
                positions = []
                for j in sorted(chosen):
                    positions.extend(range(j * BS, min((j + 1) * BS, lt + 1)))
                qh = q_groups[h]
                if positions:
                    ix = torch.tensor(positions, dtype=torch.long, device=dev)
                    o_h = attend(qh, k_heads[h][ix], v_heads[h][ix])
                else:
                    o_h = qh.new_zeros(G, Vd)
                o_h = o_h * gs_groups[h]
                if use_swa:
                    w0 = max(0, lt - window_size + 1)
                    o_w = attend(qh, k_heads[h][w0:lt + 1], v_heads[h][w0:lt + 1])
                    o_h = o_h + o_w * gw_groups[h]
                heads.append(o_h)
            rows[b][t] = torch.cat(heads, dim=0)
    zero = qf.new_zeros(HQ, vf.shape[-1])
    o = torch.stack([torch.stack([r if r is not None else zero for r in row], dim=0) for row in rows], dim=0)
    o = o.to(out_dtype)
    if head_first:
        o = o.transpose(1, 2)
    return o
