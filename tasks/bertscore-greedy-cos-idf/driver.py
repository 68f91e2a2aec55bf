"""Driver for `lmr record`: calls `greedy_cos_idf` on seeded random token embeddings.

Inputs have the layout `bert_cos_score_idf` builds: embeddings padded with 2.0 (B x K x d, or
B x K x L x d with all_layers), padding masks (bool, or long as `padding` makes them) and idf
weights that are 0 at padded positions (and, like [CLS]/[SEP] in the upstream, sometimes 0 at
the first and last real token; always so where a sentence is empty, i.e. only [CLS] and [SEP],
as the pipeline gives every [CLS] and [SEP] idf 0). Every call gets fresh tensors: the
reference normalises its inputs in place.
"""
import torch

from bert_score.utils import greedy_cos_idf

gen = torch.Generator().manual_seed(1234)


def embeddings(lengths, k, d, layers=None, offset=0.0, dtype=torch.float32):
    shape = (len(lengths), k, d) if layers is None else (len(lengths), k, layers, d)
    emb = torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype) + offset
    for b, n in enumerate(lengths):
        emb[b, n:] = 2.0  # pad_sequence(..., padding_value=2.0) in bert_cos_score_idf
    return emb


def mask(lengths, k, kind="bool"):
    m = torch.arange(k).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return m if kind == "bool" else m.long()


def idf(lengths, k, uniform=False, special_zero=False, dtype=torch.float32):
    w = torch.ones(len(lengths), k, dtype=torch.float64) if uniform else torch.rand(len(lengths), k, generator=gen, dtype=torch.float64) * 3 + 0.2
    w = w.to(dtype)
    for b, n in enumerate(lengths):
        w[b, n:] = 0.0
        if special_zero and n >= 2:
            w[b, 0] = 0.0
            w[b, n - 1] = 0.0
    return w


def side(lengths, k, d, layers=None, offset=0.0, kind="bool", uniform=False, special_zero=False, dtype=torch.float32):
    return (embeddings(lengths, k, d, layers, offset, dtype), mask(lengths, k, kind), idf(lengths, k, uniform, special_zero, dtype))


# 1-3: a padded batch of three, with bool masks, long masks, and uniform idf
greedy_cos_idf(*side([6, 4, 3], 6, 8), *side([5, 5, 2 + 1], 5, 8))
greedy_cos_idf(*side([7, 3, 5], 7, 8, kind="long"), *side([4, 6, 6], 6, 8, kind="long"))
greedy_cos_idf(*side([5, 5, 4], 5, 8, uniform=True), *side([6, 3, 6], 6, 8, uniform=True))

# 4-5: batch size 1 without padding; embeddings with a shared offset (mostly positive cosines, as with BERT)
greedy_cos_idf(*side([5], 5, 16), *side([7], 7, 16))
greedy_cos_idf(*side([6, 4, 5, 3], 6, 12, offset=1.5), *side([3, 6, 4, 5], 6, 12, offset=1.5))

# 6: idf 0 at the first and last real token ([CLS]/[SEP]), longer batch
greedy_cos_idf(*side([9, 5, 7, 4, 8], 9, 10, special_zero=True), *side([6, 9, 4, 7, 5], 9, 10, special_zero=True))

# 7-8: all_layers (B x K x L x d), with padding and with batch size 1
greedy_cos_idf(*side([5, 3], 5, 6, layers=3), *side([4, 6], 6, 6, layers=3), all_layers=True)
greedy_cos_idf(*side([4], 4, 6, layers=4), *side([6], 6, 6, layers=4), True)

# 9-10: an empty candidate / an empty reference: only [CLS] and [SEP] (two real tokens), whose
# idf the pipeline sets to 0 (as for every [CLS] and [SEP]), so that side's idf sums to 0
greedy_cos_idf(*side([5, 4, 6], 6, 8, special_zero=True), *side([2, 5, 3], 5, 8, special_zero=True))
greedy_cos_idf(*side([2, 3, 5], 5, 8, offset=0.5, special_zero=True), *side([4, 2, 6], 6, 8, offset=0.5, special_zero=True))

# 11: empty sentences with all_layers
greedy_cos_idf(*side([2, 5, 4], 5, 6, layers=2, special_zero=True), *side([3, 2, 5], 5, 6, layers=2, special_zero=True), all_layers=True)

# 12: float64 throughout
greedy_cos_idf(*side([5, 3, 4], 5, 8, dtype=torch.float64), *side([4, 6, 2 + 2], 6, 8, dtype=torch.float64))

# 13: identical candidate and reference (P = R = F = 1), non-uniform idf
hyp = side([6, 4, 5], 6, 8)
greedy_cos_idf(hyp[0].clone(), hyp[1].clone(), hyp[2].clone(), hyp[0].clone(), hyp[1].clone(), hyp[2].clone())

# 14: orthogonal tokens: P = R = 0, so F is 0/0 and must come out as 0
e1 = torch.zeros(2, 4, 5)
e1[:, :, 0] = 1.0
e2 = torch.zeros(2, 4, 5)
e2[:, :, 1] = 1.0
m = mask([4, 3], 4)
greedy_cos_idf(e2, m.clone(), idf([4, 3], 4), e1, m.clone(), idf([4, 3], 4))
