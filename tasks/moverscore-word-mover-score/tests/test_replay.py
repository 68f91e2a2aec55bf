"""Replay tests: the implementation against the reference's scores in fixtures/scores.json.

generators/scores.py called the reference word_mover_score (with the tiny DistilBERT of
tests/tiny_distilbert.py) on 21 cases: paraphrases, identical and unrelated texts, corpus,
uniform and per-token idf weights, stop words, word pieces, punctuation, unknown words, texts
longer than the model's maximum length, several batch sizes, and the n_gram and
remove_subwords flags. Each test makes the same call again and compares every score within
ATOL. The reference computes distances in float32 and sends the flow through float32, so on
near-identical texts it sits up to ~2e-4 below an exact computation; ATOL leaves room for any
sound float32 or float64 computation and nothing more.

The call is made in the candidate process (lmr_bridge): the probe below gets a case's inputs
(texts, idf specs, options; never its scores) and builds the idf dictionaries there, as the
generator did; the recorded scores stay in this process and decide the test here.
"""
import json
from pathlib import Path

import pytest
from lmr_bridge import probe

import moverscore_cases

ATOL = 1e-3

CASES = json.loads((Path(__file__).resolve().parent / "../fixtures/scores.json").read_text(encoding="utf-8"))["cases"]


@probe
def replay_call(refs, hyps, idf_ref, idf_hyp, options):
    """In the candidate: the generator's call of word_mover_score, made again."""
    from moverscore_v2 import tokenizer, word_mover_score

    return word_mover_score(
        refs,
        hyps,
        moverscore_cases.idf_dict(idf_ref, tokenizer),
        moverscore_cases.idf_dict(idf_hyp, tokenizer),
        device="cpu",
        **options,
    )


def _call(case):
    return replay_call(list(case["refs"]), list(case["hyps"]), case["idf_ref"], case["idf_hyp"], case["options"])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_scores_match_reference(case):
    got = _call(case)
    assert len(got) == len(case["scores"]), f"{len(got)} scores for {len(case['scores'])} pairs"
    for k, (g, want) in enumerate(zip(got, case["scores"])):
        g = float(g)
        assert abs(g - want) <= ATOL, f"pair {k} ({case['refs'][k]!r} / {case['hyps'][k]!r}): got {g!r}, reference {want!r}"
