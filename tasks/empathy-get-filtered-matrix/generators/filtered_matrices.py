"""Writes fixtures/filtered_matrices.json: get_filtered_matrix's output on synthetic result folders.

Run by `lmr record` from the root of the reference tree (the upstream with the reference
get_filtered_matrix in analysis/analysis_after_processing.py); writes
$LMR_FIXTURES_OUT/fixtures/filtered_matrices.json and nothing else.

Each case builds a processed_results/ folder with tests/empathy_data.py (seeded; the tests
build the same folder from the same arguments) in a temporary directory, computes the
narratives to exclude as the notebook does (refused under any pair of the group option),
and records the matrix the reference returns when run from that directory.
"""
import contextlib
import io
import json
import os
import random
import sys
import tempfile
from pathlib import Path

import numpy as np

random.seed(0)
np.random.seed(0)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, os.getcwd())

import empathy_data  # noqa: E402
from analysis.analysis_after_processing import get_filtered_matrix, group_mappings  # noqa: E402

# name, group option, prompt variation, model id, seed, scale
CASES = [
    ("religion-origin", "religion", "origin", "llama-8b", 11, 100),
    ("religion-persona-2", "religion", "persona-2", "llama-70b", 12, 100),
    ("religion-10-scale", "religion", "10-scale", "qwen", 13, 10),
    ("religion-1-person", "religion", "1-person", "mistral", 14, 100),
]


def run_case(group_option, prompt_variation, model_id, seed, scale):
    groups = group_mappings[group_option]
    values = empathy_data.make_intensities(groups, empathy_data.same_label, seed, scale=scale)
    excluded = empathy_data.excluded_ids(groups, values)
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        empathy_data.write_folder(tmp, group_option, prompt_variation, model_id, values)
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                matrix = get_filtered_matrix(group_option, prompt_variation, model_id, excluded)
        finally:
            os.chdir(here)
    return len(excluded), [[float(v) for v in row] for row in np.asarray(matrix)]


def main():
    cases = []
    for name, group_option, prompt_variation, model_id, seed, scale in CASES:
        n_excluded, matrix = run_case(group_option, prompt_variation, model_id, seed, scale)
        cases.append({"name": name, "group_option": group_option, "prompt_variation": prompt_variation, "model_id": model_id,
                      "seed": seed, "scale": scale, "n_excluded": n_excluded, "matrix": matrix})
    out = Path(os.environ["LMR_FIXTURES_OUT"]) / "fixtures" / "filtered_matrices.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"cases": cases}, sort_keys=True, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
