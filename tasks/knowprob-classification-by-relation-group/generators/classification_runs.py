"""Writes fixtures/classification_runs.json: the reference perform_classification_by_relation_group on probing results we build.

Run by `lmr record` (or by hand) from the root of the task's reference tree, after
tests/conftest.py (which turns joblib's process pools off: the reference's Parallel then
runs its per-layer fits in threads, with the same results), with LMR_FIXTURES_OUT naming the
output folder; writes $LMR_FIXTURES_OUT/fixtures/classification_runs.json and nothing else.

Why a generator and not a driver: a recorded call stores every activation vector of its
frame (one npz member per row, layer and position): about 3.7 MB for these eight cases.
This file stores each frame's spec instead (tests/probing_frames.py rebuilds the frame from
it, seeded, identically on every machine) and the reference's records for it.

The cases: the paper's three modules (MLP-L2 "mlp", MLP-L1 "mlp-l1", MHSA "mhsa") at the
object, the subject and the relation token, the control probe on the first token; string
and integer relation group ids; groups of very different sizes, CK the majority class
(the paper's Figure 4) but one group with more PK; rows of the groups interleaved; a group
answered from the context only (its balanced test set is empty); frames that store several
positions; a group whose PK/CK direction is reversed (so its success rates fall below 0.5).
"""
import json
import os
import random
import sys
from pathlib import Path

import numpy as np

random.seed(0)
np.random.seed(0)

sys.path.insert(0, os.getcwd())
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from probing_frames import flags, probing_results  # noqa: E402
from src.classification.classifier import perform_classification_by_relation_group  # noqa: E402

OUTPUT = "fixtures/classification_runs.json"

GROUPS = [
    ["geographic-geopolitic-language", 46, 14],
    ["corporate-products-employment", 24, 9],
    ["religion", 11, 6],
    ["media", 7, 5],
    ["hierarchy", 9, 3],
]
ALL = ["first", "object", "subject_query", "relation_query"]

CASES = [
    ("mlp-relation-query", "mlp", "relation_query",
     dict(seed=1, groups=GROUPS, module="mlp", n_layers=4, signal={"relation_query": [0.0, 1.0, 2.5, 6.0]})),
    ("mlp-l1-object", "mlp-l1", "object",
     dict(seed=2, groups=GROUPS, module="mlp-l1", n_layers=6, stored=["object"],
          signal={"object": [0.0, 0.5, 1.5, 3.0, 4.0, 1.0]})),
    ("mhsa-subject-query-interleaved", "mhsa", "subject_query",
     dict(seed=3, groups=GROUPS, module="mhsa", n_layers=3, stored=["subject_query"],
          signal={"subject_query": [1.0, 3.0, 0.5]}, interleave=True)),
    ("control-first-token", "mlp", "first",
     dict(seed=4, groups=GROUPS, module="mlp", n_layers=4, stored=["first"], signal={})),
    ("integer-group-ids-pk-majority", "mlp", "relation_query",
     dict(seed=5, groups=[[3, 20, 12], [1, 8, 15], [7, 12, 4], [2, 9, 9]], module="mlp", n_layers=5,
          signal={"relation_query": [0.0, 2.0, 4.0, 2.0, 0.5]}, index_gaps=False)),
    ("context-only-group", "mhsa", "relation_query",
     dict(seed=6, groups=[["media", 10, 0], ["religion", 14, 6], ["hierarchy", 10, 7], ["occupy-position", 12, 5]],
          module="mhsa", n_layers=3, signal={"relation_query": [0.5, 2.0, 5.0]})),
    ("all-positions-stored", "mlp", "subject_query",
     dict(seed=7, groups=GROUPS, module="mlp", n_layers=4, stored=ALL,
          signal={"first": [0.0] * 4, "object": [6.0, 3.0, 1.5, 0.0], "subject_query": [0.0, 1.5, 3.0, 6.0],
                  "relation_query": [3.0, 0.0, 6.0, 1.5]})),
    ("reversed-group", "mlp", "relation_query",
     dict(seed=8, groups=[["religion", 25, 10], ["media", 16, 18], ["hierarchy", 14, 6]], module="mlp", n_layers=2,
          signal={"relation_query": [1.0, 5.0]}, flip=["media"])),
]


def plain(value):
    if isinstance(value, np.generic):
        return value.item()
    return value


def main():
    out = []
    for name, module, position, spec in CASES:
        frame = probing_results(**spec)
        records = perform_classification_by_relation_group(
            prompting_results=frame, vertical=True, position=position, **flags(module)
        )
        out.append({
            "name": name,
            "frame": spec,
            "module": module,
            "position": position,
            "records": [{k: plain(v) for k, v in r.items()} for r in records],
        })
    path = Path(os.environ["LMR_FIXTURES_OUT"]) / OUTPUT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cases": out}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
