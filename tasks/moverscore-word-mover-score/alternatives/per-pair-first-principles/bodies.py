# Alternative 'per-pair-first-principles': encodes each chunk itself (own
# tokenisation/padding, forward pass asking for hidden states explicitly),
# builds each pair's weights in plain Python, keeps only tokens of positive
# weight, computes float64 Euclidean distances between unit vectors by explicit
# differences, and solves the compact transport problem with pyemd.emd.

# lmr-body: moverscore_v2.py::word_mover_score
    import numpy as _np
    import torch as _torch
    import string as _string
    from pyemd import emd as _emd

    scores = []
    if len(refs) == 0:
        return scores
    punct = set(_string.punctuation)
    max_len = tokenizer.model_max_length
    pad_id = tokenizer.convert_tokens_to_ids(["[PAD]"])[0]

    def encode(texts, idf_dict):
        """-> list of (unit-normalised float64 embeddings [n, D], weights [n])
        restricted to the tokens that take part (positive weight)."""
        token_lists = []
        for text in texts:
            pieces = tokenizer.tokenize(text)
            if len(pieces) > max_len - 2:
                pieces = pieces[:max_len - 2]
            token_lists.append(["[CLS]"] + pieces + ["[SEP]"])
        id_lists = [tokenizer.convert_tokens_to_ids(t) for t in token_lists]
        width = max(len(ids) for ids in id_lists)
        input_ids = _torch.full((len(id_lists), width), pad_id, dtype=_torch.long)
        attn = _torch.zeros((len(id_lists), width), dtype=_torch.long)
        for r, ids in enumerate(id_lists):
            input_ids[r, :len(ids)] = _torch.tensor(ids, dtype=_torch.long)
            attn[r, :len(ids)] = 1
        model.eval()
        with _torch.no_grad():
            out = model(input_ids.to(device), attention_mask=attn.to(device),
                        output_hidden_states=True, return_dict=True)
        hidden = getattr(out, "hidden_states", None)
        last = hidden[-1] if hidden is not None else out[0]
        last = last.detach().to("cpu", dtype=_torch.float64).numpy()

        encoded = []
        for r, (toks, ids) in enumerate(zip(token_lists, id_lists)):
            weights = []
            for tok, tid in zip(toks, ids):
                w = float(idf_dict[tid])
                if tok in stop_words or "##" in tok or tok in punct:
                    w = 0.0
                weights.append(w)
            weights = _np.asarray(weights, dtype=_np.float64)
            keep = weights > 0
            vecs = last[r, :len(ids)][keep]
            norms = _np.sqrt((vecs * vecs).sum(axis=1, keepdims=True))
            vecs = vecs / (norms + 1e-30)
            encoded.append((vecs, weights[keep]))
        return encoded

    for start in range(0, len(refs), batch_size):
        ref_enc = encode(list(refs[start:start + batch_size]), idf_dict_ref)
        hyp_enc = encode(list(hyps[start:start + batch_size]), idf_dict_hyp)
        for (xr, wr), (xh, wh) in zip(ref_enc, hyp_enc):
            n_r, n_h = len(wr), len(wh)
            if n_r == 0 or n_h == 0 or wr.sum() <= 0 or wh.sum() <= 0:
                # outside the contract (a side with no weighted token)
                scores.append(float("nan"))
                continue
            pts = _np.concatenate([xr, xh], axis=0)
            diff = pts[:, None, :] - pts[None, :, :]
            cost = _np.sqrt(_np.maximum((diff * diff).sum(axis=-1), 0.0))
            cost = _np.ascontiguousarray(cost, dtype=_np.float64)
            supply = _np.zeros(n_r + n_h, dtype=_np.float64)
            demand = _np.zeros(n_r + n_h, dtype=_np.float64)
            supply[:n_r] = wr / wr.sum()
            demand[n_r:] = wh / wh.sum()
            distance = float(_emd(supply, demand, cost))
            scores.append(1.0 / (1.0 + distance))
    return scores
