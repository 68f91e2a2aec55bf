"""Property tests for greedy_cos_idf (bert_score/utils.py): BERTScore's greedy matching.

P (precision): each candidate token is matched to its most similar reference token (cosine
similarity), weighted by the candidate's normalised idf; R (recall) the other way round;
F the harmonic mean. The oracle below is written from that definition with Python loops,
including the conventions the instruction states: a padded position has similarity 0 with
everything, and a pair with an empty side scores 0. Inputs look like the ones
bert_cos_score_idf builds: embeddings padded with 2.0, idf 0 at padded positions, and an empty
sentence ([CLS] and [SEP] only) has idf 0 at both its tokens, as the pipeline gives the special
tokens. Every call gets fresh tensors (the code under test may normalise its inputs in place).

The function runs in the candidate process (lmr_bridge): each call sends the tensors there as
data and gets P, R and F back as tensors built here; every expected value below is computed in
this process, from the inputs it chose.
"""
import math

import pytest
import torch
from lmr_bridge import candidate

greedy_cos_idf = candidate.function("bert_score.utils:greedy_cos_idf")

_isfinite = math.isfinite


def close(a, b, tol=1e-5):
    return abs(a - b) <= tol + tol * abs(b)


def assert_vec(actual, expected, tol=1e-5):
    got = [float(x) for x in actual.flatten().tolist()]
    assert len(got) == len(expected), (got, expected)
    for g, e in zip(got, expected):
        assert close(g, e, tol), (got, expected)


def seeded(seed):
    return torch.Generator().manual_seed(seed)


def make_side(lengths, k, d, gen, layers=None, offset=0.0, idf_uniform=False):
    shape = (len(lengths), k, d) if layers is None else (len(lengths), k, layers, d)
    emb = torch.randn(*shape, generator=gen) + offset
    mask = torch.arange(k).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    idf = torch.ones(len(lengths), k) if idf_uniform else torch.rand(len(lengths), k, generator=gen) * 2 + 0.1
    for b, n in enumerate(lengths):
        emb[b, n:] = 2.0
        idf[b, n:] = 0.0
        if n == 2:  # an empty sentence: [CLS] and [SEP], whose idf the pipeline sets to 0
            idf[b, :2] = 0.0
    return emb, mask, idf


def clone(side):
    return tuple(t.clone() for t in side)


def call(ref, hyp, all_layers=False):
    return greedy_cos_idf(*clone(ref), *clone(hyp), all_layers=all_layers)


def oracle(ref, hyp):
    """(P, R, F) lists for all_layers=False, from the definition."""
    r_emb, r_mask, r_idf = (t.double().tolist() for t in ref)
    h_emb, h_mask, h_idf = (t.double().tolist() for t in hyp)
    out_p, out_r, out_f = [], [], []
    for b in range(len(r_emb)):
        def cos(u, v):
            return sum(x * y for x, y in zip(u, v)) / math.sqrt(sum(x * x for x in u) * sum(y * y for y in v))

        if sum(h_mask[b]) == 2 or sum(r_mask[b]) == 2:  # an empty side
            out_p.append(0.0)
            out_r.append(0.0)
            out_f.append(0.0)
            continue
        kh, kr = len(h_emb[b]), len(r_emb[b])
        sim = [[cos(h_emb[b][i], r_emb[b][j]) if (h_mask[b][i] and r_mask[b][j]) else 0.0 for j in range(kr)] for i in range(kh)]
        hw = sum(h_idf[b])
        rw = sum(r_idf[b])
        p = sum(h_idf[b][i] / hw * max(sim[i]) for i in range(kh))
        r = sum(r_idf[b][j] / rw * max(sim[i][j] for i in range(kh)) for j in range(kr))
        out_p.append(p)
        out_r.append(r)
        out_f.append(2 * p * r / (p + r) if p + r != 0 else 0.0)
    return out_p, out_r, out_f


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_matches_the_definition_on_padded_batches(seed):
    gen = seeded(seed)
    b = 3 + seed % 2
    ref = make_side([7, 4, 6, 5][:b], 7, 9, gen)
    hyp = make_side([5, 6, 3, 4][:b], 6, 9, gen)
    P, R, F = call(ref, hyp)
    ep, er, ef = oracle(ref, hyp)
    assert_vec(P, ep)
    assert_vec(R, er)
    assert_vec(F, ef)


def test_returns_a_tuple_of_three_1d_tensors():
    gen = seeded(5)
    ref, hyp = make_side([4, 3], 4, 5, gen), make_side([3, 4], 4, 5, gen)
    out = call(ref, hyp)
    assert isinstance(out, tuple) and len(out) == 3
    for t in out:
        assert isinstance(t, torch.Tensor)
        assert tuple(t.shape) == (2,)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_outputs_have_the_dtype_of_the_embeddings(dtype):
    gen = seeded(5)
    ref, hyp = make_side([4, 3], 4, 5, gen), make_side([3, 4], 4, 5, gen)
    ref, hyp = ((ref[0].to(dtype), ref[1], ref[2].to(dtype)), (hyp[0].to(dtype), hyp[1], hyp[2].to(dtype)))
    for t in call(ref, hyp):
        assert t.dtype == dtype


def test_identical_candidate_and_reference_score_one():
    gen = seeded(6)
    side = make_side([5, 3, 6], 6, 8, gen)
    for uniform in (True, False):
        s = side if not uniform else (side[0], side[1], side[1].float())
        P, R, F = call(s, s)
        assert_vec(P, [1.0] * 3)
        assert_vec(R, [1.0] * 3)
        assert_vec(F, [1.0] * 3)


def test_hand_computed_example():
    # candidate tokens: e1, e2, (e1 + e2); reference tokens: 2 e1, 3 e3, e3 (no padding, uniform idf)
    s = 1 / math.sqrt(2)
    hyp = (torch.tensor([[[1.0, 0, 0], [0, 1.0, 0], [1.0, 1.0, 0]]]), torch.ones(1, 3, dtype=torch.bool), torch.ones(1, 3))
    ref = (torch.tensor([[[2.0, 0, 0], [0, 0, 3.0], [0, 0, 1.0]]]), torch.ones(1, 3, dtype=torch.bool), torch.ones(1, 3))
    P, R, F = call(ref, hyp)
    p = (1 + 0 + s) / 3  # each candidate token's best cosine
    r = (1 + 0 + 0) / 3  # e1 finds e1; e3 is orthogonal to every candidate token
    assert_vec(P, [p])
    assert_vec(R, [r])
    assert_vec(F, [2 * p * r / (p + r)])


def test_idf_weights_the_tokens():
    s = 1 / math.sqrt(2)
    hyp = (torch.tensor([[[1.0, 0, 0], [0, 1.0, 0], [1.0, 1.0, 0]]]), torch.ones(1, 3, dtype=torch.bool), torch.tensor([[3.0, 1.0, 0.5]]))
    ref = (torch.tensor([[[2.0, 0, 0], [0, 0, 3.0], [0, 0, 1.0]]]), torch.ones(1, 3, dtype=torch.bool), torch.tensor([[0.25, 0.75, 1.0]]))
    P, R, F = call(ref, hyp)
    assert_vec(P, [(3.0 * 1 + 1.0 * 0 + 0.5 * s) / 4.5])
    assert_vec(R, [(0.25 * 1 + 0.75 * 0 + 1.0 * 0) / 2.0])


def test_padded_positions_count_as_similarity_zero():
    # the only real reference token points away from the candidate token: cosine -1
    # (without the padded column both scores would be -1)
    hyp = (torch.tensor([[[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]]), torch.ones(1, 3, dtype=torch.bool), torch.ones(1, 3))
    ref_padded = (torch.tensor([[[-1.0, 0.0], [-2.0, 0.0], [-1.0, 0.0], [2.0, 2.0]]]), torch.tensor([[True, True, True, False]]),
                  torch.tensor([[1.0, 1.0, 1.0, 0.0]]))
    P, R, F = call(ref_padded, hyp)
    assert_vec(P, [0.0])  # the padded column offers 0, which beats -1
    assert_vec(R, [-1.0])


def test_padding_content_does_not_matter():
    gen = seeded(9)
    ref, hyp = make_side([6, 3, 5], 6, 7, gen, offset=0.5), make_side([4, 5, 2 + 1], 5, 7, gen, offset=0.5)
    base = call(ref, hyp)
    ref2 = clone(ref)
    hyp2 = clone(hyp)
    ref2[0][1, 3:] = torch.randn(3, 7, generator=gen)
    hyp2[0][2, 3:] = -5.0
    other = call(ref2, hyp2)
    for a, b in zip(base, other):
        assert_vec(a, b.tolist())


def test_long_and_bool_masks_agree():
    gen = seeded(10)
    ref, hyp = make_side([6, 2 + 2, 5], 6, 8, gen), make_side([5, 5, 3], 5, 8, gen)
    with_bool = call(ref, hyp)
    with_long = call((ref[0], ref[1].long(), ref[2]), (hyp[0], hyp[1].long(), hyp[2]))
    for a, b in zip(with_bool, with_long):
        assert_vec(a, b.tolist())


def test_swapping_candidate_and_reference_swaps_precision_and_recall():
    gen = seeded(11)
    ref, hyp = make_side([6, 4, 5], 6, 8, gen), make_side([3, 5, 5], 5, 8, gen)
    P, R, F = call(ref, hyp)
    P2, R2, F2 = call(hyp, ref)
    assert_vec(P2, R.tolist())
    assert_vec(R2, P.tolist())
    assert_vec(F2, F.tolist())


def test_invariant_to_token_norms():
    gen = seeded(12)
    ref, hyp = make_side([5, 4], 5, 6, gen), make_side([4, 5], 5, 6, gen)
    base = call(ref, hyp)
    scale = torch.rand(2, 5, 1, generator=gen) * 10 + 0.1
    ref2 = (ref[0] * scale, ref[1], ref[2])
    hyp2 = (hyp[0] * scale.flip(1), hyp[1], hyp[2])
    for a, b in zip(base, call(ref2, hyp2)):
        assert_vec(a, b.tolist(), tol=1e-4)


def test_invariant_to_the_scale_of_the_idf_weights():
    gen = seeded(12)
    ref, hyp = make_side([5, 4], 5, 6, gen), make_side([4, 5], 5, 6, gen)
    base = call(ref, hyp)
    ref2 = (ref[0], ref[1], ref[2] * 7.0)
    hyp2 = (hyp[0], hyp[1], hyp[2] * 0.01)
    for a, b in zip(base, call(ref2, hyp2)):
        assert_vec(a, b.tolist(), tol=1e-4)


def test_batch_elements_are_independent():
    gen = seeded(13)
    ref, hyp = make_side([6, 4, 5, 2 + 1], 6, 8, gen), make_side([5, 3, 5, 4], 5, 8, gen)
    P, R, F = call(ref, hyp)
    for b in range(4):
        one = call(tuple(t[b:b + 1] for t in ref), tuple(t[b:b + 1] for t in hyp))
        assert_vec(one[0], [P[b].item()])
        assert_vec(one[1], [R[b].item()])
        assert_vec(one[2], [F[b].item()])


def test_pairs_with_an_empty_sentence_score_zero():
    gen = seeded(14)
    ref = make_side([2, 5, 4, 6], 6, 8, gen, offset=0.3)  # element 0: [CLS] and [SEP] only
    hyp = make_side([4, 2, 3, 5], 5, 8, gen, offset=0.3)  # element 1: [CLS] and [SEP] only
    P, R, F = call(ref, hyp)
    for name, t in (("P", P), ("R", R), ("F", F)):
        assert [t[0].item(), t[1].item()] == [0.0, 0.0], (name, t.tolist())


def test_three_real_tokens_are_not_empty():
    gen = seeded(14)
    ref = make_side([2, 5, 4, 6], 6, 8, gen, offset=0.3)
    hyp = make_side([4, 2, 3, 5], 5, 8, gen, offset=0.3)  # element 2: three real tokens
    P, R, F = call(ref, hyp)
    ep, er, ef = oracle(ref, hyp)
    assert_vec(P[2:], ep[2:])
    assert_vec(R[2:], er[2:])
    assert_vec(F[2:], ef[2:])


def test_orthogonal_tokens_give_zero_not_nan():
    e1 = torch.zeros(1, 3, 4)
    e1[..., 0] = 1.0
    e2 = torch.zeros(1, 3, 4)
    e2[..., 2] = 1.0
    m = torch.ones(1, 3, dtype=torch.bool)
    _, _, F = call((e1, m, torch.ones(1, 3)), (e2, m, torch.ones(1, 3)))  # P = R = 0
    assert _isfinite(F.item()) and F.item() == 0.0


@pytest.mark.parametrize("lengths,layers", [(([5, 3], [4, 6]), 3), (([6], [4]), 2), (([4, 2, 5], [3, 5, 4]), 3)])
def test_all_layers_returns_layers_by_batch(lengths, layers):
    gen = seeded(18)
    ref = make_side(lengths[0], max(lengths[0]), 6, gen, layers=layers)
    hyp = make_side(lengths[1], max(lengths[1]), 6, gen, layers=layers)
    for t in call(ref, hyp, all_layers=True):
        assert tuple(t.shape) == (layers, len(lengths[0]))


def test_all_layers_matches_layer_by_layer():
    gen = seeded(15)
    layers = 3
    ref = make_side([5, 3], 5, 6, gen, layers=layers)
    hyp = make_side([4, 6], 6, 6, gen, layers=layers)
    P, R, F = call(ref, hyp, all_layers=True)
    for layer in range(layers):
        ref_l = (ref[0][:, :, layer, :], ref[1], ref[2])
        hyp_l = (hyp[0][:, :, layer, :], hyp[1], hyp[2])
        one = call(ref_l, hyp_l, all_layers=False)
        assert_vec(P[layer], one[0].tolist())
        assert_vec(R[layer], one[1].tolist())
        assert_vec(F[layer], one[2].tolist())


def test_all_layers_with_equal_batch_and_layer_count_and_an_empty_sentence():
    gen = seeded(16)
    ref = make_side([4, 2, 5], 5, 4, gen, layers=3)
    hyp = make_side([3, 5, 4], 5, 4, gen, layers=3)
    P, R, F = call(ref, hyp, all_layers=True)
    for layer in range(3):
        ep, er, ef = oracle((ref[0][:, :, layer, :], ref[1], ref[2]), (hyp[0][:, :, layer, :], hyp[1], hyp[2]))
        assert_vec(P[layer], ep)
        assert_vec(R[layer], er)
        assert_vec(F[layer], ef)


def test_batch_size_one_all_layers():
    gen = seeded(17)
    ref = make_side([6], 6, 5, gen, layers=2)
    hyp = make_side([4], 4, 5, gen, layers=2)
    P, R, F = call(ref, hyp, all_layers=True)
    for layer in range(2):
        ep, er, ef = oracle((ref[0][:, :, layer, :], ref[1], ref[2]), (hyp[0][:, :, layer, :], hyp[1], hyp[2]))
        assert_vec(P[layer], ep)
        assert_vec(R[layer], er)
        assert_vec(F[layer], ef)
