"""Property tests of word_mover_score, from the paper and the contract in instruction.md.

tests/oracle.py is an independent MoverScore (each text encoded alone, float64 distances, the
transport problem solved by scipy's linear programming, not pyemd); the other tests check
properties any correct implementation has: one float per pair, in order, in (0, 1]; identical
texts score ~1; symmetry under swapping the two sides; independence of batching and of the
other pairs; invariance to rescaling the idf weights; tokens that are dropped (punctuation,
word pieces, stop words) carrying no weight whatever their idf; the [CLS]/[SEP] positions
taking part with their idf weight; truncation at the model's maximum length; unchanged inputs.

word_mover_score runs in the candidate process (lmr_bridge), where moverscore_v2 loads the
tiny DistilBERT of tests/tiny_distilbert.py through the candidate's set-up. The idf
dictionaries cannot travel there (defaultdicts with a lambda factory), so each call sends
their description (moverscore_cases.idf_table) and the probe builds them there. This process
never imports moverscore_v2: it builds the same tiny tokenizer and model itself, as the
module asks for them, for the oracle's expected values.
"""
import math

import pytest
from lmr_bridge import probe

import moverscore_cases
import oracle
import tiny_distilbert

ATOL = 1e-3

# what moverscore_v2 gets from AutoTokenizer/AutoModel.from_pretrained under the candidate's set-up
tokenizer = tiny_distilbert.make_tokenizer(do_lower_case=True)
model = tiny_distilbert.make_model(output_hidden_states=True, output_attentions=True)

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


@probe
def mover_scores(calls):
    """In the candidate: what word_mover_score returns for each call, its idf dictionaries built there."""
    from moverscore_v2 import tokenizer, word_mover_score

    out = []
    for c in calls:
        idf_ref = moverscore_cases.idf_table(c["idf_ref"], tokenizer)
        idf_hyp = moverscore_cases.idf_table(c["idf_hyp"], tokenizer)
        out.append(word_mover_score(c["refs"], c["hyps"], idf_ref, idf_hyp, device="cpu", **c["options"]))
    return out


@probe
def inputs_after_a_call(refs, hyps, stop):
    """In the candidate: the lists the call was given, as they are after it."""
    from moverscore_v2 import tokenizer, word_mover_score

    idf = moverscore_cases.idf_table({"spec": {"kind": "uniform", "value": 1.0}}, tokenizer)
    word_mover_score(refs, hyps, idf, idf, stop_words=stop, device="cpu")
    return {"refs": refs, "hyps": hyps, "stop": stop}


def ones():
    return {"spec": {"kind": "uniform", "value": 1.0}}


def corpus(texts):
    return {"spec": {"kind": "corpus", "texts": list(texts)}}


def by_id(offset, scale, mod):
    return {"spec": {"kind": "by_id", "offset": offset, "scale": scale, "mod": mod}}


def table(entry):
    """The idf dictionary an entry describes, built here (for the oracle's expected values)."""
    return moverscore_cases.idf_table(entry, tokenizer)


def raw_scores(refs, hyps, idf_ref=None, idf_hyp=None, **kw):
    idf_ref = ones() if idf_ref is None else idf_ref
    idf_hyp = ones() if idf_hyp is None else idf_hyp
    return mover_scores([{"refs": list(refs), "hyps": list(hyps), "idf_ref": idf_ref, "idf_hyp": idf_hyp, "options": kw}])[0]


def score(refs, hyps, idf_ref=None, idf_hyp=None, **kw):
    return [float(s) for s in raw_scores(refs, hyps, idf_ref, idf_hyp, **kw)]


def close(a, b):
    return len(a) == len(b) and all(abs(x - y) <= ATOL for x, y in zip(a, b))


def ids_of(tokens):
    return sorted(set(tokenizer.convert_tokens_to_ids(list(tokens))))


def with_weight(base, ids, weight):
    return {"spec": base["spec"], "set": list(base.get("set", [])) + [[list(ids), weight]]}


@pytest.mark.parametrize("k", range(len(PAIRS)))
def test_matches_oracle_with_uniform_idf(k):
    got = score([REFS[k]], [HYPS[k]])[0]
    want = oracle.mover_score(REFS[k], HYPS[k], table(ones()), table(ones()), tokenizer, model)
    assert abs(got - want) <= ATOL, (got, want)


def test_matches_oracle_with_corpus_idf():
    idf_ref, idf_hyp = corpus(REFS), corpus(HYPS)
    got = score(REFS, HYPS, idf_ref, idf_hyp)
    want = [oracle.mover_score(r, h, table(idf_ref), table(idf_hyp), tokenizer, model) for r, h in PAIRS]
    assert close(got, want), (got, want)


def test_matches_oracle_with_per_token_idf():
    idf_ref, idf_hyp = by_id(0.25, 0.5, 7), by_id(1.0, 0.3, 5)
    got = score(REFS, HYPS, idf_ref, idf_hyp)
    want = [oracle.mover_score(r, h, table(idf_ref), table(idf_hyp), tokenizer, model) for r, h in PAIRS]
    assert close(got, want), (got, want)


def test_matches_oracle_with_stop_words():
    stop = ["the", "a", "in", "is"]
    got = score(REFS, HYPS, stop_words=stop)
    want = [oracle.mover_score(r, h, table(ones()), table(ones()), tokenizer, model, stop) for r, h in PAIRS]
    assert close(got, want), (got, want)


def test_returns_a_list_of_one_float_per_pair():
    got = raw_scores(REFS, HYPS)
    assert isinstance(got, list) and len(got) == len(PAIRS)
    assert all(isinstance(s, float) for s in got), [type(s) for s in got]


def test_empty_input_gives_empty_list():
    assert list(raw_scores([], [])) == []


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
        oracle.mover_score(r, h, table(with_weight(corpus(REFS), specials, 5.0)), table(with_weight(corpus(HYPS), specials, 5.0)), tokenizer, model)
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
    # the candidate reports the lists after the call (a claim; the scores are checked elsewhere)
    after = inputs_after_a_call(list(REFS), list(HYPS), ["the", "a"])
    assert after == {"refs": REFS, "hyps": HYPS, "stop": ["the", "a"]}


def test_score_is_the_reciprocal_of_one_plus_the_distance():
    # one content token each side, uniform idf, [CLS]/[SEP] weigh 0: the distance is that of
    # the two unit-normalised last-layer vectors, so the score is 1 / (1 + that distance)
    idf = with_weight(ones(), ids_of(["[CLS]", "[SEP]"]), 0.0)
    got = score(["dog"], ["cat"], idf, idf)[0]
    x, _ = oracle.weighted_points("dog", table(idf), (), tokenizer, model)
    y, _ = oracle.weighted_points("cat", table(idf), (), tokenizer, model)
    dog, cat = x[1], y[1]
    distance = math.sqrt(sum((a - b) ** 2 for a, b in zip(dog, cat)))
    assert abs(got - 1.0 / (1.0 + distance)) <= ATOL, (got, distance)
