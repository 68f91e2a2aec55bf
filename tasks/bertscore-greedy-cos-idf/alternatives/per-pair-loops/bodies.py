# Alternative 'per-pair-loops' for bertscore-greedy-cos-idf: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: bert_score/utils.py::greedy_cos_idf
    # Explicit loops over the pairs of the batch and over the layers; every pair is scored on
    # its own, from the sums in Sec. 3 of the paper:
    #   R = sum_j idf(ref_j) max_i cos(ref_j, hyp_i) / sum_j idf(ref_j)
    #   P = sum_i idf(hyp_i) max_j cos(hyp_i, ref_j) / sum_i idf(hyp_i)
    dtype = hyp_embedding.dtype
    batch_size = hyp_embedding.size(0)
    num_layers = hyp_embedding.size(2) if all_layers else 1
    kh, kr = hyp_embedding.size(1), ref_embedding.size(1)

    P = torch.zeros(num_layers, batch_size, dtype=dtype)
    R = torch.zeros(num_layers, batch_size, dtype=dtype)
    F = torch.zeros(num_layers, batch_size, dtype=dtype)

    for b in range(batch_size):
        hyp_real = hyp_masks[b] != 0  # Kh
        ref_real = ref_masks[b] != 0  # Kr
        n_hyp, n_ref = int(hyp_real.sum()), int(ref_real.sum())
        if n_hyp == 2 or n_ref == 2:
            # Only [CLS] and [SEP]: empty sentence, scores stay 0.
            continue
        # A padded position of the other sentence offers similarity 0 to each maximum.
        hyp_has_pad = n_hyp < kh
        ref_has_pad = n_ref < kr
        w_hyp = hyp_idf[b].to(dtype)
        w_ref = ref_idf[b].to(dtype)
        for layer in range(num_layers):
            if all_layers:
                h = hyp_embedding[b, :, layer, :][hyp_real]  # n_hyp x d
                r = ref_embedding[b, :, layer, :][ref_real]  # n_ref x d
            else:
                h = hyp_embedding[b][hyp_real]
                r = ref_embedding[b][ref_real]
            # Cosine similarity from first principles: dot products over the product of norms.
            dots = h @ r.t()  # n_hyp x n_ref
            norms = torch.outer(h.pow(2).sum(-1).sqrt(), r.pow(2).sum(-1).sqrt())
            cos = dots / norms

            # (A side with no real token at all only has padded positions, offering 0.)
            best_for_hyp = cos.max(dim=1)[0] if n_ref > 0 else cos.new_zeros(n_hyp)  # n_hyp
            best_for_ref = cos.max(dim=0)[0] if n_hyp > 0 else cos.new_zeros(n_ref)  # n_ref
            if ref_has_pad:
                best_for_hyp = best_for_hyp.clamp(min=0.0)
            if hyp_has_pad:
                best_for_ref = best_for_ref.clamp(min=0.0)

            # Padded positions have idf 0: they add nothing to the numerators, and adding
            # their idf to the denominators changes nothing.
            p = (w_hyp[hyp_real] * best_for_hyp).sum() / w_hyp.sum()
            rc = (w_ref[ref_real] * best_for_ref).sum() / w_ref.sum()
            P[layer, b] = p
            R[layer, b] = rc
            F[layer, b] = 0.0 if float(p + rc) == 0.0 else 2 * p * rc / (p + rc)

    if not all_layers:
        return P[0], R[0], F[0]
    return P, R, F
