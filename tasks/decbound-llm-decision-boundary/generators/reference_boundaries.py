"""Writes fixtures/reference_boundaries.json: what the reference probe_decision_boundary
returns on a few larger grids (ours, not upstream code).

Run by `lmr record` from the root of the reference tree, after tests/candidate_setup.py;
writes $LMR_FIXTURES_OUT/fixtures/reference_boundaries.json and nothing else. Each case is
drawn as the tests draw theirs (tests/boundary_oracle.py's context_set, the tiny model and
tokenizer of tests/tiny_lm.py). Stored per case: its inputs, the reference's labels (0 or 1
per grid point, as integers), and which points are clear, i.e. where the model's greedy
token, and the class scores where they decide, win by more than 1e-3 (computed here from
the model run on each whole prompt), so that no correct way of running the model can turn
them. The grid itself is checked by the property tests, not stored.
"""
import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import boundary_oracle as oracle  # noqa: E402
import tiny_lm  # noqa: E402
from get_llm_decision_boundary import probe_decision_boundary  # noqa: E402

# (id, model seed, data kind, data seed, in-context points, experiment, model name, grid size)
CASES = [
    ("moon-foobar", 1, "moon", 31, 16, "foobar", "Llama-3-8B", 8),
    ("linear-yesno-instruct", 2, "linear", 32, 20, "yesno", "llama3-8b_instruct", 8),
    ("circle-AandB", 4, "circle", 34, 16, "AandB", "Llama-3-8B", 8),
]


def main():
    torch.manual_seed(0)
    records = []
    tokenizer = tiny_lm.make_tokenizer()
    for case_id, model_seed, kind, data_seed, n, experiment, model_name, size in CASES:
        model = tiny_lm.make_model(model_seed)
        X, y = oracle.context_set(kind, data_seed, n)
        names = oracle.EXPERIMENTS[experiment]
        args = argparse.Namespace(grid_size=size, model_name=model_name)
        _, _, labels = probe_decision_boundary(model, tokenizer, args, X, y, list(names), oracle.system_prompt(names), oracle.QUERY)
        clear = oracle.boundary(model, tokenizer, X, y, names, size, model_name)["clear"]
        records.append({
            "id": case_id, "model_seed": model_seed, "kind": kind, "data_seed": data_seed, "points": n,
            "experiment": experiment, "model_name": model_name, "grid_size": size,
            "labels": np.asarray(labels).astype(int).tolist(), "clear": clear.tolist(),
        })
    out = Path(os.environ["LMR_FIXTURES_OUT"]) / "fixtures" / "reference_boundaries.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"cases": records}, indent=1, sort_keys=True) + "\n", encoding="utf-8")


main()
