"""Grader tests for metrics.lcs_length and metrics.rouge_l (module made from metrics.ipynb)."""
import json
import random
from pathlib import Path

import pytest
from lmr_bridge import candidate, probe

lcs_length = candidate.function("metrics:lcs_length")
rouge_l = candidate.function("metrics:rouge_l")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDED = json.loads((FIXTURES / "rouge_cases.json").read_text(encoding="utf-8"))


def brute_force_lcs(a, b):
    """Exhaustive LCS for short inputs, written independently of the task."""
    best = 0
    n = len(a)
    for mask in range(1 << n):
        sub = [a[i] for i in range(n) if mask >> i & 1]
        if len(sub) <= best:
            continue
        it = iter(b)
        if all(any(x == y for y in it) for x in sub):
            best = len(sub)
    return best


@pytest.mark.parametrize("case", RECORDED["lcs_length"], ids=lambda c: "".join(c["a"])[:12])
def test_lcs_length_recorded(case):
    assert lcs_length(case["a"], case["b"]) == case["length"]


@pytest.mark.parametrize("case", RECORDED["lcs_length"], ids=lambda c: "".join(c["a"])[:12])
def test_lcs_length_is_symmetric(case):
    assert lcs_length(case["b"], case["a"]) == lcs_length(case["a"], case["b"])


def test_lcs_length_empty_inputs():
    assert lcs_length([], []) == 0
    assert lcs_length(["a", "b"], []) == 0
    assert lcs_length([], ["a"]) == 0


def test_lcs_length_matches_brute_force():
    rng = random.Random(7)
    for _ in range(150):
        a = [rng.choice("abcd") for _ in range(rng.randint(0, 9))]
        b = [rng.choice("abcd") for _ in range(rng.randint(0, 9))]
        assert lcs_length(a, b) == brute_force_lcs(a, b), (a, b)


@probe
def inputs_after_lcs_length(a, b):
    """In the candidate: the arguments as lcs_length leaves them."""
    from metrics import lcs_length

    lcs_length(a, b)
    return [a, b]


def test_lcs_length_does_not_modify_its_inputs():
    assert inputs_after_lcs_length(list("banana"), list("atana")) == [list("banana"), list("atana")]


@pytest.mark.parametrize("case", RECORDED["rouge_l"], ids=lambda c: f"{c['candidate'][:20]}-b{c['beta']}")
def test_rouge_l_recorded(case):
    assert pytest.approx(case["rouge_l"], abs=1e-12) == rouge_l(case["candidate"], case["reference"], beta=case["beta"])


def test_rouge_l_default_beta_is_1_2():
    # P = 1, R = 1/2
    assert pytest.approx(2.44 * 0.5 / (0.5 + 1.44), abs=1e-12) == rouge_l("the cat sat", "the cat sat on the mat")


def test_rouge_l_of_identical_token_lists_is_one():
    assert pytest.approx(1.0, abs=1e-12) == rouge_l("A quick brown fox.", "a quick brown fox")


def test_rouge_l_without_common_words_is_zero():
    assert rouge_l("completely different words", "nothing shared here") == 0.0


@pytest.mark.parametrize("candidate, reference", [("", "the reference"), ("the candidate", ""), ("!!!", "words"), ("", "")])
def test_rouge_l_empty_token_lists_score_zero(candidate, reference):
    assert rouge_l(candidate, reference) == 0.0


def test_rouge_l_approaches_recall_for_large_beta():
    # P = 1, R = 1/3
    assert pytest.approx(1 / 3, abs=1e-3) == rouge_l("the cat", "the cat sat on the mat", beta=50.0)


def test_rouge_l_approaches_precision_for_small_beta():
    # P = 1, R = 1/3
    assert pytest.approx(1.0, abs=1e-3) == rouge_l("the cat", "the cat sat on the mat", beta=0.02)


def test_rouge_l_counts_only_words_in_order():
    # the same four words reversed share a subsequence of one word: P = R = 1/4
    assert pytest.approx(0.25, abs=1e-12) == rouge_l("a b c d", "d c b a")
