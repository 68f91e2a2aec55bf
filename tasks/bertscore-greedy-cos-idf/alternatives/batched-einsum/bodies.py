# Alternative 'batched-einsum' for bertscore-greedy-cos-idf: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: bert_score/utils.py::greedy_cos_idf
    # Vectorised over the batch (and the layers): one batched similarity tensor.
    out_dtype = hyp_embedding.dtype
    if not all_layers:
        # Treat the single-layer case as L = 1: B x K x 1 x d.
        hyp_embedding = hyp_embedding.unsqueeze(2)
        ref_embedding = ref_embedding.unsqueeze(2)

    # Cosine similarity (Sec. 3, "Similarity Measure"): unit-normalise every token vector,
    # then inner products. sim[l, b, i, j] = <hyp_b,i, ref_b,j> at layer l.
    hyp_unit = hyp_embedding / hyp_embedding.norm(dim=-1, keepdim=True)
    ref_unit = ref_embedding / ref_embedding.norm(dim=-1, keepdim=True)
    sim = torch.einsum("bild,bjld->lbij", hyp_unit, ref_unit)

    # Any pair involving a padded position has similarity 0 (it still takes part in the maxima).
    hyp_valid = hyp_masks.bool()
    ref_valid = ref_masks.bool()
    pair_valid = hyp_valid.unsqueeze(2) & ref_valid.unsqueeze(1)  # B x Kh x Kr
    sim = sim.masked_fill(~pair_valid.unsqueeze(0), 0.0)

    # Greedy matching: each candidate token to its most similar reference token (precision),
    # each reference token to its most similar candidate token (recall).
    word_precision = sim.max(dim=3)[0]  # L x B x Kh
    word_recall = sim.max(dim=2)[0]  # L x B x Kr

    # Importance weighting: idf-weighted average, with weights normalised per sentence.
    hyp_weights = hyp_idf / hyp_idf.sum(dim=1, keepdim=True)
    ref_weights = ref_idf / ref_idf.sum(dim=1, keepdim=True)
    P = (word_precision * hyp_weights.unsqueeze(0)).sum(dim=2).to(out_dtype)  # L x B
    R = (word_recall * ref_weights.unsqueeze(0)).sum(dim=2).to(out_dtype)  # L x B

    # Empty candidate or reference ([CLS] and [SEP] only): all scores 0.
    hyp_empty = hyp_valid.sum(dim=1).eq(2)
    ref_empty = ref_valid.sum(dim=1).eq(2)
    empty = (hyp_empty | ref_empty).unsqueeze(0)  # 1 x B
    if torch.any(hyp_empty):
        print("Warning: Empty candidate sentence detected; setting raw BERTscores to 0.", file=sys.stderr)
    if torch.any(ref_empty):
        print("Warning: Empty reference sentence detected; setting raw BERTScores to 0.", file=sys.stderr)
    P = P.masked_fill(empty, 0.0)
    R = R.masked_fill(empty, 0.0)

    denom = P + R
    F = torch.where(denom == 0, torch.zeros_like(denom), 2 * P * R / denom)
    F = F.masked_fill(empty, 0.0)

    if not all_layers:
        P, R, F = P.squeeze(0), R.squeeze(0), F.squeeze(0)
    return P, R, F
