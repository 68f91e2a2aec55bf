"""Writes fixtures/similarity_cases.json: compute_mean_cosine_similarity on decryption pairs.

Run by `lmr record` from the root of the reference tree (the upstream notebook turned into
Tabular.py, with the reference compute_mean_cosine_similarity); writes
$LMR_FIXTURES_OUT/fixtures/similarity_cases.json and nothing else.

Each case is a dict of decryption pairs from tests/census_pairs.py (all of them, subsets,
one pair, only exact decryptions) and the reference's result with the offline client of
tests/fake_openai.py, stored as the one number it holds.
"""
import json
import os
import random
import sys
from pathlib import Path

import numpy as np

random.seed(0)
np.random.seed(0)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, os.getcwd())

import census_pairs  # noqa: E402
import fake_openai  # noqa: E402
from Tabular import compute_mean_cosine_similarity  # noqa: E402

L = census_pairs.LEVELS
CASES = [
    ("all-levels", L),
    ("text-features", [x for x in L if x[1].startswith(" ")]),
    ("numeric-features", [x for x in L if not x[1].startswith(" ")]),
    ("one-pair", [L[3]]),
    ("exact-decryptions", [x for x in L if x[1] == x[2]]),
    ("every-third", L[::3]),
]


def main():
    out = []
    for name, levels in CASES:
        pairs = census_pairs.pairs(levels)
        result = compute_mean_cosine_similarity(pairs, fake_openai.FakeOpenAI())
        out.append({"name": name, "pairs": [[k, v] for k, v in pairs.items()], "result": float(np.asarray(result).reshape(-1)[0])})
    path = Path(os.environ["LMR_FIXTURES_OUT"]) / "fixtures" / "similarity_cases.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cases": out}, sort_keys=True, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
