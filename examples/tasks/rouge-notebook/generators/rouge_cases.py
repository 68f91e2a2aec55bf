"""Writes fixtures/rouge_cases.json: rouge_l and lcs_length of the reference (metrics.py, made
from metrics.ipynb by the notebook-to-module step) on the repository's five summary pairs and
on hand-picked sentences and token lists.

Run by `lmr record` from the root of the reference tree with $LMR_FIXTURES_OUT set. Nothing
here is random.
"""
import json
import os
import random
import sys

random.seed(0)  # nothing below draws from it; seeded so that the contract holds if that changes
sys.path.insert(0, os.getcwd())

from data import load_pairs  # noqa: E402
from metrics import lcs_length, rouge_l  # noqa: E402  (the reference)

SENTENCES = [  # (candidate, reference, beta)
    ("the cat sat on the mat", "the cat is on the mat", 1.0),
    ("the cat sat on the mat", "the cat is on the mat", 3.0),
    ("a b c d e f", "f e d c b a", 1.2),
    ("police killed the gunman", "the gunman killed police", 1.2),
    ("Police killed the gunman!", "police kill the gunman", 0.5),
    ("the cat sat", "The cat sat on the mat.", 3.0),
    ("the cat sat", "The cat sat on the mat.", 0.5),
    ("It's raining; it's pouring.", "it's pouring and it's raining", 1.2),
    ("the the the cat", "the cat the", 2.0),
]
TOKEN_LISTS = [
    (list("ABCBDAB"), list("BDCABA")),
    (list("AGGTAB"), list("GXTXAYB")),
    ("the cat sat on the mat".split(), "the cat is on the mat".split()),
    (list("abcdefghij"), list("jihgfedcba")),
    (list("aaaa"), list("aa")),
    (list("xyz"), list("abc")),
    (list("abcabcabc"), list("cbacbacba")),
    (["x"], ["x"]),
]


def write_json(rel, data):
    path = os.path.join(os.environ["LMR_FIXTURES_OUT"], rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # json writes floats with repr (the shortest text that reads back to the same double)
    text = json.dumps(data, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=True) + "\n"
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


cases = [(system, reference, 1.2) for system, reference in load_pairs()] + SENTENCES
write_json("fixtures/rouge_cases.json", {
    "about": "Written by generators/rouge_cases.py from the reference rouge_l / lcs_length of "
             "metrics-notebook (metrics.ipynb code cells 0-2); the first five rouge_l cases are "
             "the pairs of data/summaries.jsonl.",
    "rouge_l": [
        {"candidate": c, "reference": r, "beta": beta, "rouge_l": float(rouge_l(c, r, beta=beta))}
        for c, r, beta in cases
    ],
    "lcs_length": [{"a": a, "b": b, "length": int(lcs_length(a, b))} for a, b in TOKEN_LISTS],
})
