"""An independent MoverScore for the property tests (ours, not upstream code).

Written from the paper (section 3: the Word Mover's Distance between the idf-weighted
unigram embeddings of the two texts) and the conventions stated in instruction.md, without
the module's helpers: each text is encoded alone (no padding) by the module's tokenizer and
model, the last layer's outputs are unit-normalised in float64, the transport problem is solved
as a linear programme with scipy (not pyemd), and the score is 1 / (1 + distance).
"""
import string

import numpy as np
import torch
from scipy.optimize import linprog

PUNCT = set(string.punctuation)


def encode(text, tokenizer, model):
    tokens = ["[CLS]"] + tokenizer.tokenize(text)[: tokenizer.model_max_length - 2] + ["[SEP]"]
    ids = tokenizer.convert_tokens_to_ids(tokens)
    with torch.no_grad():
        out = model(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long), output_hidden_states=True)
    last = out.hidden_states[-1][0].double().numpy()
    return tokens, ids, last


def weighted_points(text, idf, stop_words, tokenizer, model):
    tokens, ids, vectors = encode(text, tokenizer, model)
    keep = [k for k, t in enumerate(tokens) if t not in stop_words and "##" not in t and t not in PUNCT]
    weights = np.array([float(idf[ids[k]]) for k in keep], dtype=np.float64)
    points = vectors[keep]
    points = points / np.linalg.norm(points, axis=1, keepdims=True)
    return points, weights


def transport_cost(a, b, cost):
    """min <F, cost> over F >= 0 with row sums a and column sums b (sum a = sum b = 1)."""
    n, m = cost.shape
    rows = np.zeros((n, n * m))
    cols = np.zeros((m, n * m))
    for i in range(n):
        rows[i, i * m : (i + 1) * m] = 1.0
    for j in range(m):
        cols[j, j::m] = 1.0
    res = linprog(cost.reshape(-1), A_eq=np.vstack([rows, cols]), b_eq=np.concatenate([a, b]), bounds=(0, None), method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


def mover_score(ref, hyp, idf_ref, idf_hyp, tokenizer, model, stop_words=()):
    x, wx = weighted_points(ref, idf_ref, stop_words, tokenizer, model)
    y, wy = weighted_points(hyp, idf_hyp, stop_words, tokenizer, model)
    a = wx / wx.sum()
    b = wy / wy.sum()
    cost = np.sqrt(np.maximum(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1), 0.0))
    return 1.0 / (1.0 + transport_cost(a, b, cost))
