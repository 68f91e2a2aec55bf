"""Tests for compute_mean_cosine_similarity (Tabular.py), ours.

The function scores a decryption attack: for every (encrypted level, decrypted level) pair
it embeds the original value and the decrypted value with the client's embeddings endpoint
(text-embedding-3-small, 100 dimensions) and adds up their cosine similarities; the notebook
divides that total by the number of pairs to print the mean. The client here is the offline
fake of fake_openai.py; the oracle takes the cosines of the fake's vectors with numpy.

The function runs in the candidate process (lmr_bridge), with the fake client built there
(fake_openai.py is a candidate file); the pairs are chosen here, and every expected value is
computed here with fake_openai.embed. What the client saw and the pairs after the call are
the candidate's own reports; the numbers checked against the oracle are the anchor.
"""
import json
from pathlib import Path

import numpy as np
import pytest
from lmr_bridge import probe

_isclose = np.isclose
_asarray = np.asarray

import census_pairs  # noqa: E402
from fake_openai import embed  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@probe
def scored(items):
    """In the candidate: the function on the pairs `items` ([key, value] in order, as a dict)
    with a fresh fake client; its result, the client's calls, and the pairs as it left them."""
    from fake_openai import FakeOpenAI
    from Tabular import compute_mean_cosine_similarity

    pairs = {k: v for k, v in items}
    client = FakeOpenAI()
    result = compute_mean_cosine_similarity(pairs, client)
    return {"result": result, "calls": client.calls, "pairs": [[k, v] for k, v in pairs.items()]}


def score(pairs):
    """The full report of one call (see scored)."""
    return scored([[k, v] for k, v in pairs.items()])


def compute_mean_cosine_similarity(pairs):
    """The function's result on `pairs`, with a fresh fake client."""
    return score(pairs)["result"]


def value_of(level):
    return level.split(", Value: ", 1)[1]


def oracle(pairs, transform=lambda s: s):
    total = 0.0
    for k, v in pairs.items():
        a, b = embed(transform(value_of(k))), embed(transform(value_of(v)))
        total += float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    return total


def as_number(result):
    arr = _asarray(result, dtype=float)
    assert arr.size == 1, f"expected one number (or a 1x1 array), got shape {arr.shape}"
    return float(arr.reshape(-1)[0])


def close(a, b):
    return bool(_isclose(a, b, rtol=1e-9, atol=1e-9))


CASES = json.loads((FIXTURES / "similarity_cases.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_the_recorded_reference(case):
    pairs = {k: v for k, v in case["pairs"]}
    assert close(as_number(compute_mean_cosine_similarity(pairs)), case["result"])


def test_is_the_sum_of_the_pairs_cosine_similarities():
    pairs = census_pairs.pairs()
    assert close(as_number(compute_mean_cosine_similarity(pairs)), oracle(pairs))


def test_exact_decryptions_count_one_each():
    pairs = census_pairs.pairs([("age", "39", "39"), ("capital-gain", "0", "0"), ("sex", " Male", " Male"), ("race", " White", " White")])
    assert close(as_number(compute_mean_cosine_similarity(pairs)), 4.0)


def test_one_pair_is_its_cosine_similarity():
    pairs = census_pairs.pairs([("workclass", " State-gov", "state-gov")])
    got = as_number(compute_mean_cosine_similarity(pairs))
    assert close(got, oracle(pairs))
    assert 0.0 < got < 1.0


def test_no_pairs_give_zero():
    assert as_number(compute_mean_cosine_similarity({})) == 0.0


def test_embeds_the_two_values_of_each_pair_and_nothing_else():
    pairs = census_pairs.pairs()
    calls = score(pairs)["calls"]
    embedded = {t for call in calls for t in call["input"]}
    expected = {value_of(k) for k in pairs} | {value_of(v) for v in pairs.values()}
    assert embedded == expected


def test_asks_for_text_embedding_3_small_with_100_dimensions():
    calls = score(census_pairs.pairs(census_pairs.LEVELS[:6]))["calls"]
    assert calls
    assert all(call["model"] == "text-embedding-3-small" and call["dimensions"] == 100 for call in calls)


def test_values_are_embedded_as_they_stand():
    # the census values keep their leading space, decryptions their case and newlines
    levels = [("workclass", " State-gov", "state-gov"), ("age", "38", "\n38"), ("education", " Masters", "\nmasters degree")]
    pairs = census_pairs.pairs(levels)
    assert abs(oracle(pairs) - oracle(pairs, transform=lambda s: s.strip().lower())) > 0.1
    assert close(as_number(compute_mean_cosine_similarity(pairs)), oracle(pairs))


def test_the_order_of_the_pairs_does_not_matter():
    pairs = census_pairs.pairs()
    backwards = dict(reversed(list(pairs.items())))
    a = as_number(compute_mean_cosine_similarity(pairs))
    b = as_number(compute_mean_cosine_similarity(backwards))
    assert close(a, b)


def test_leaves_the_pairs_unchanged():
    # the candidate's own report of the pairs after the call; the sums above are the anchor
    pairs = census_pairs.pairs()
    before = dict(pairs)
    after = score(pairs)["pairs"]
    assert dict(after) == before and [k for k, _ in after] == list(before)
