# Alternative 'batched-helpers': chunk-wise, reuses the module's helpers
# (get_bert_embedding, batched_cdist_l2, _safe_divide) and solves one EMD per
# pair on the joint (padded reference + padded hypothesis) token space with
# pyemd.emd_with_flow; the distance is sum(flow * cost).

# lmr-body: moverscore_v2.py::word_mover_score
    preds = []
    n_pairs = len(refs)
    if n_pairs == 0:
        return preds
    punct = set(string.punctuation)

    def _excluded(tok):
        return (tok in stop_words) or ('##' in tok) or (tok in punct)

    def _weights(padded_idf, mask, tokens):
        # idf weights of every real token ([CLS]/[SEP] included); padding,
        # stop words, word pieces and punctuation get weight 0
        w = padded_idf.detach().to('cpu', dtype=torch.float64).clone()
        w = w * mask.detach().to('cpu', dtype=torch.float64)
        for r, toks in enumerate(tokens):
            for k, tok in enumerate(toks):
                if _excluded(tok):
                    w[r, k] = 0.
        return w

    for start in range(0, n_pairs, batch_size):
        chunk_refs = list(refs[start:start + batch_size])
        chunk_hyps = list(hyps[start:start + batch_size])

        ref_emb, _, ref_mask, ref_idf, ref_tokens = get_bert_embedding(
            chunk_refs, model, tokenizer, idf_dict_ref, device=device)
        hyp_emb, _, hyp_mask, hyp_idf, hyp_tokens = get_bert_embedding(
            chunk_hyps, model, tokenizer, idf_dict_hyp, device=device)

        # stacked hidden states: [n_layers + 1, B, T, D]; keep the last layer
        ref_emb = ref_emb[-1].float()
        hyp_emb = hyp_emb[-1].float()

        ref_w = _weights(ref_idf, ref_mask, ref_tokens)
        hyp_w = _weights(hyp_idf, hyp_mask, hyp_tokens)

        n_ref = ref_emb.shape[1]
        raw = torch.cat([ref_emb, hyp_emb], dim=1)
        raw = raw / (torch.norm(raw, dim=-1, keepdim=True) + 1e-30)
        dist = batched_cdist_l2(raw, raw).double().cpu().numpy()
        n_all = raw.shape[1]

        for i in range(len(chunk_refs)):
            c1 = np.zeros(n_all, dtype=np.float64)
            c2 = np.zeros(n_all, dtype=np.float64)
            c1[:n_ref] = ref_w[i].numpy()
            c2[n_ref:] = hyp_w[i].numpy()
            c1 = _safe_divide(c1, np.sum(c1))
            c2 = _safe_divide(c2, np.sum(c2))
            cost = np.ascontiguousarray(dist[i], dtype=np.float64)
            _, flow = emd_with_flow(c1, c2, cost)
            d = float(np.sum(np.asarray(flow, dtype=np.float64) * cost))
            preds.append(1. / (1. + d))

    return preds
