"""Property tests of word_mover_score, from the paper and the contract in instruction.md.

tests/oracle.py is an independent MoverScore (each text encoded alone, float64 distances, the
transport problem solved by scipy's linear programming, not pyemd); the other tests check
properties any correct implementation has: one float per pair, in order, in (0, 1]; identical
texts score ~1; symmetry under swapping the two sides; independence of batching and of the
other pairs; invariance to rescaling the idf weights; tokens that are dropped (punctuation,
word pieces, stop words) carrying no weight whatever their idf; the [CLS]/[SEP] positions
taking part with their idf weight; truncation at the model's maximum length; unchanged inputs.
"""
import math
from collections import defaultdict

import pytest

import moverscore_cases
import oracle
from moverscore_v2 import model, tokenizer, word_mover_score

ATOL = 1e-3

PAIRS = [
    ("the dog bit the man .", "the man bit the dog ."),
    ("a small cat ate the bird", "the little cat ate a bird"),
    ("the police officer saw the boy in the park", "the officer saw a child in the park ."),
    ("she had bitten the dogs yesterday", "he bit the dog today"),
    ("the teacher wrote a long letter", "rain"),
    ("the boys played happily , in the parks !", "the boy is playing in the park"),
]
REFS = [r for r, _ in PAIRS]
HYPS = [h for _, h in PAIRS]


def ones():
    return defaultdict(lambda: 1.0)


def corpus(texts):
    return moverscore_cases.idf_dict({"kind": "corpus", "texts": texts}, tokenizer)


def by_id(offset, scale, mod):
    return moverscore_cases.idf_dict({"kind": "by_id", "offset": offset, "scale": scale, "mod": mod}, tokenizer)


def score(refs, hyps, idf_ref=None, idf_hyp=None, **kw):
    idf_ref = ones() if idf_ref is None else idf_ref
    idf_hyp = ones() if idf_hyp is None else idf_hyp
    return [float(s) for s in word_mover_score(list(refs), list(hyps), idf_ref, idf_hyp, device="cpu", **kw)]


def close(a, b):
    return len(a) == len(b) and all(abs(x - y) <= ATOL for x, y in zip(a, b))


def ids_of(tokens):
    return set(tokenizer.convert_tokens_to_ids(list(tokens)))


def with_weight(base, ids, weight):
    table = defaultdict(base.default_factory)
    table.update(base)
    for i in ids:
        table[i] = weight
    return table


@pytest.mark.parametrize("k", range(len(PAIRS)))
def test_matches_oracle_with_uniform_idf(k):
    got = score([REFS[k]], [HYPS[k]])[0]
    want = oracle.mover_score(REFS[k], HYPS[k], ones(), ones(), tokenizer, model)
    assert abs(got - want) <= ATOL, (got, want)


def test_matches_oracle_with_corpus_idf():
    idf_ref, idf_hyp = corpus(REFS), corpus(HYPS)
    got = score(REFS, HYPS, idf_ref, idf_hyp)
    want = [oracle.mover_score(r, h, idf_ref, idf_hyp, tokenizer, model) for r, h in PAIRS]
    assert close(got, want), (got, want)


def test_matches_oracle_with_per_token_idf():
    idf_ref, idf_hyp = by_id(0.25, 0.5, 7), by_id(1.0, 0.3, 5)
    got = score(REFS, HYPS, idf_ref, idf_hyp)
    want = [oracle.mover_score(r, h, idf_ref, idf_hyp, tokenizer, model) for r, h in PAIRS]
    assert close(got, want), (got, want)


def test_matches_oracle_with_stop_words():
    stop = ["the", "a", "in", "is"]
    got = score(REFS, HYPS, stop_words=stop)
    want = [oracle.mover_score(r, h, ones(), ones(), tokenizer, model, stop) for r, h in PAIRS]
    assert close(got, want), (got, want)


def test_returns_a_list_of_one_float_per_pair():
    got = word_mover_score(REFS, HYPS, ones(), ones(), device="cpu")
    assert isinstance(got, list) and len(got) == len(PAIRS)
    assert all(isinstance(s, float) for s in got), [type(s) for s in got]


def test_empty_input_gives_empty_list():
    assert list(word_mover_score([], [], ones(), ones(), device="cpu")) == []


def test_scores_lie_in_the_unit_interval():
    got = score(REFS, HYPS, corpus(REFS), corpus(HYPS))
    assert all(0.0 < s <= 1.0 + 1e-9 for s in got), got


def test_identical_texts_score_one():
    texts = ["the dog bit the man .", "a small cat ate the bird", "the teacher wrote a long letter"]
    got = score(texts, texts)
    assert all(abs(s - 1.0) <= ATOL for s in got), got


def test_different_texts_score_below_one():
    got = score(["the teacher wrote a long letter"], ["rain"])[0]
    assert got < 0.9, got


def test_swapping_reference_and_hypothesis_keeps_the_score():
    idf_ref, idf_hyp = corpus(REFS), corpus(HYPS)
    forward = score(REFS, HYPS, idf_ref, idf_hyp)
    backward = score(HYPS, REFS, idf_hyp, idf_ref)
    assert close(forward, backward), (forward, backward)


@pytest.mark.parametrize("batch_size", [1, 2, 4])
def test_batch_size_does_not_change_the_scores(batch_size):
    idf_ref, idf_hyp = corpus(REFS), corpus(HYPS)
    whole = score(REFS, HYPS, idf_ref, idf_hyp)
    batched = score(REFS, HYPS, idf_ref, idf_hyp, batch_size=batch_size)
    assert close(whole, batched), (whole, batched)


def test_scores_come_in_input_order_and_do_not_depend_on_other_pairs():
    together = score(REFS, HYPS)
    alone = [score([r], [h])[0] for r, h in PAIRS]
    assert close(together, alone), (together, alone)


def test_rescaling_the_idf_weights_leaves_the_scores():
    base = score(REFS, HYPS, by_id(0.25, 0.5, 7), by_id(1.0, 0.3, 5))
    scaled = score(REFS, HYPS, by_id(0.25 * 8, 0.5 * 8, 7), by_id(1.0 / 3, 0.3 / 3, 5))
    assert close(base, scaled), (base, scaled)


def test_punctuation_carries_no_weight():
    punct = ids_of(t for t in tokenizer.get_vocab() if len(t) == 1 and not t.isalnum())
    base = score(REFS, HYPS)
    heavy = score(REFS, HYPS, with_weight(ones(), punct, 1000.0), with_weight(ones(), punct, 1000.0))
    assert close(base, heavy), (base, heavy)


def test_word_pieces_carry_no_weight():
    pieces = ids_of(t for t in tokenizer.get_vocab() if t.startswith("##"))
    base = score(REFS, HYPS)
    heavy = score(REFS, HYPS, with_weight(ones(), pieces, 1000.0), with_weight(ones(), pieces, 1000.0))
    assert close(base, heavy), (base, heavy)


def test_stop_words_carry_no_weight():
    stop = ["the", "a"]
    base = score(REFS, HYPS, stop_words=stop)
    heavy_ids = ids_of(stop)
    heavy = score(REFS, HYPS, with_weight(ones(), heavy_ids, 1000.0), with_weight(ones(), heavy_ids, 1000.0), stop_words=stop)
    assert close(base, heavy), (base, heavy)


def test_stop_words_change_the_scores():
    base = score(REFS[:4], HYPS[:4])
    stopped = score(REFS[:4], HYPS[:4], stop_words=["the", "a", "in"])
    assert max(abs(x - y) for x, y in zip(base, stopped)) > 10 * ATOL, (base, stopped)


def test_cls_and_sep_take_part_with_their_idf_weight():
    specials = ids_of(["[CLS]", "[SEP]"])
    base = score(REFS, HYPS, corpus(REFS), corpus(HYPS))
    heavy = score(REFS, HYPS, with_weight(corpus(REFS), specials, 5.0), with_weight(corpus(HYPS), specials, 5.0))
    want = [
        oracle.mover_score(r, h, with_weight(corpus(REFS), specials, 5.0), with_weight(corpus(HYPS), specials, 5.0), tokenizer, model)
        for r, h in PAIRS
    ]
    assert close(heavy, want), (heavy, want)
    assert max(abs(x - y) for x, y in zip(base, heavy)) > 10 * ATOL, (base, heavy)


def test_remove_subwords_and_n_gram_have_no_effect():
    base = score(REFS, HYPS)
    assert close(score(REFS, HYPS, remove_subwords=False), base)
    assert close(score(REFS, HYPS, n_gram=2), base)


def test_texts_are_truncated_at_the_model_maximum_length():
    limit = tokenizer.model_max_length - 2
    long_ref = " ".join(["the old man walked to the park"] * 5)
    long_hyp = " ".join(["a woman ran to the city"] * 5)
    head_ref = tokenizer.convert_tokens_to_string(tokenizer.tokenize(long_ref)[:limit])
    head_hyp = tokenizer.convert_tokens_to_string(tokenizer.tokenize(long_hyp)[:limit])
    got = score([long_ref, long_hyp], [long_hyp, "the man walked"])
    want = score([head_ref, head_hyp], [head_hyp, "the man walked"])
    assert close(got, want), (got, want)


def test_inputs_are_left_unchanged():
    refs, hyps = list(REFS), list(HYPS)
    stop = ["the", "a"]
    word_mover_score(refs, hyps, ones(), ones(), stop_words=stop, device="cpu")
    assert refs == REFS and hyps == HYPS and stop == ["the", "a"]


def test_score_is_the_reciprocal_of_one_plus_the_distance():
    # one content token each side, uniform idf, [CLS]/[SEP] weigh 0: the distance is that of
    # the two unit-normalised last-layer vectors, so the score is 1 / (1 + that distance)
    idf = with_weight(ones(), ids_of(["[CLS]", "[SEP]"]), 0.0)
    got = score(["dog"], ["cat"], idf, idf)[0]
    x, _ = oracle.weighted_points("dog", idf, (), tokenizer, model)
    y, _ = oracle.weighted_points("cat", idf, (), tokenizer, model)
    dog, cat = x[1], y[1]
    distance = math.sqrt(sum((a - b) ** 2 for a, b in zip(dog, cat)))
    assert abs(got - 1.0 / (1.0 + distance)) <= ATOL, (got, distance)
