"""Writes fixtures/deltas.json: get_delta on matrices as the analysis passes them.

Run by `lmr record` from the root of the reference tree (the upstream with the reference
get_delta in analysis/analysis_after_processing.py); writes $LMR_FIXTURES_OUT/fixtures/deltas.json
and nothing else.

For each group option: standardized emotion matrices from tests/empathy_matrices.py (with
and without an in-group effect, and with a negative one), and matrices shuffled by the
module's own permute_matrix, as get_interval's permutation test makes them (random seeded
here). Each case stores the matrix and the reference's delta.
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

import empathy_matrices  # noqa: E402
from analysis.analysis_after_processing import get_delta, permute_matrix  # noqa: E402


def main():
    cases = []
    seed = 100
    for group_option in ("ethnicity", "nationality", "religion"):
        for bonus in (1.0, 0.0, -0.5):
            seed += 1
            matrix = empathy_matrices.emotion_matrix(group_option, seed, bonus=bonus)
            cases.append((f"{group_option}-bonus{bonus:+.1f}", group_option, matrix))
        for k in range(2):
            cases.append((f"{group_option}-permuted{k}", group_option, permute_matrix(cases[-3 - k][2])))
    out = []
    for name, group_option, matrix in cases:
        delta = get_delta(matrix, group_option)
        out.append({"name": name, "group_option": group_option, "matrix": [[float(v) for v in row] for row in matrix], "delta": float(delta)})
    path = Path(os.environ["LMR_FIXTURES_OUT"]) / "fixtures" / "deltas.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cases": out}, sort_keys=True, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
