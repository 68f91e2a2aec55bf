"""Writes fixtures/probe_runs.json: what the reference probe returns on inputs we build (ours, not upstream code).

Run by `lmr record` from the root of the task's reference tree with LMR_FIXTURES_OUT naming
the output folder; writes $LMR_FIXTURES_OUT/fixtures/probe_runs.json and nothing else.

Two kinds of cases, each stored as the spec of its inputs (tests/probe_data.py rebuilds them,
seeded, identically on every machine) and the reference's records:

- "fits": feature and target arrays built directly (probe_arrays), and the record that
  _fit_regression returns for every layer: balanced and unbalanced sets, odd and single-row
  test sets, an empty test set, string and integer relation group ids, layers from chance
  level to separable, a test set from another distribution.
- "pipelines": probing-results frames (activation_frame), and the records of the whole
  leave-one-relation-group-out evaluation that scripts/main.py runs on them
  (perform_classification_by_relation_group, which balances each set with undersample_dataset,
  builds the features with get_features_and_targets_for_dataset and fits one probe per layer
  with _fit_regression): the three modules, two of them together, several token positions.

Why a generator and not a driver: a recorded call stores every activation vector; the specs
are a few lines each.
"""
import json
import os
import random
import sys
from pathlib import Path

# The reference's evaluation runs its per-layer fits with joblib's loky backend (twelve worker
# processes); without process pools joblib runs them in this process, with the same results.
os.environ["JOBLIB_MULTIPROCESSING"] = "0"

import numpy as np  # noqa: E402

random.seed(0)
np.random.seed(0)

sys.path.insert(0, os.getcwd())
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from probe_data import activation_frame, flags, probe_arrays  # noqa: E402
from src.classification.classifier import _fit_regression, perform_classification_by_relation_group  # noqa: E402

OUTPUT = "fixtures/probe_runs.json"

FITS = [
    ("balanced-rising-signal", "religion",
     dict(seed=101, train=(24, 24), test=(9, 9), n_layers=5, width=12, signal=[0.0, 0.8, 1.6, 3.0, 6.0])),
    ("unbalanced-wide", "geographic-geopolitic-language",
     dict(seed=102, train=(40, 17), test=(12, 5), n_layers=4, width=48, signal=[0.5, 1.0, 2.0, 0.3])),
    ("odd-test-set-integer-id", 7,
     dict(seed=103, train=(15, 15), test=(4, 3), n_layers=3, width=12, signal=[1.0, 2.5, 0.0])),
    ("single-test-row", "media",
     dict(seed=104, train=(10, 10), test=(0, 1), n_layers=3, width=12, signal=[0.0, 1.0, 4.0])),
    ("other-distribution", "hierarchy",
     dict(seed=105, train=(30, 30), test=(8, 8), n_layers=4, width=12, signal=[1.5, 3.0, 1.5, 3.0],
          test_shift=0.7)),
    ("reversed-in-test", 2,
     dict(seed=106, train=(20, 20), test=(6, 6), n_layers=2, width=12, signal=[0.7, 5.0], flip_test=True)),
    ("constant-layer", "corporate-products-employment",
     dict(seed=107, train=(18, 18), test=(5, 5), n_layers=3, width=12, signal=[2.0, 0.0, 2.0],
          constant_layers=[1])),
    ("empty-test-set", "naming-reference",
     dict(seed=108, train=(12, 12), test=(0, 0), n_layers=2, width=12, signal=[1.0, 2.0])),
]

GROUPS = [
    ["geographic-geopolitic-language", 34, 12],
    ["corporate-products-employment", 20, 9],
    ["religion", 10, 6],
    ["media", 7, 5],
    ["hierarchy", 9, 0],
]

PIPELINES = [
    ("mlp-relation-query", ["mlp"], "relation_query",
     dict(seed=201, groups=GROUPS, modules={"mlp": 12}, n_layers=4,
          signal={"mlp@relation_query": [0.0, 1.0, 2.5, 5.0]})),
    ("mlp-l1-object", ["mlp-l1"], "object",
     dict(seed=202, groups=GROUPS, modules={"mlp-l1": 48}, n_layers=3, stored=["object"],
          signal={"mlp-l1@object": [2.0, 0.5, 1.0]})),
    ("mhsa-subject-query-among-three-modules", ["mhsa"], "subject_query",
     dict(seed=203, groups=GROUPS, modules={"mlp": 12, "mlp-l1": 48, "mhsa": 12}, n_layers=3,
          stored=["subject_query", "relation_query"], interleave=True, index="shuffled",
          signal={"mhsa@subject_query": [0.5, 3.0, 1.0], "mlp@subject_query": [6.0, 6.0, 6.0],
                  "mhsa@relation_query": [6.0, 0.0, 6.0]})),
    ("mhsa-and-mlp-together", ["mhsa", "mlp"], "relation_query",
     dict(seed=204, groups=[[4, 16, 10], [1, 12, 14], [9, 11, 5]], modules={"mlp": 12, "mhsa": 12}, n_layers=2,
          signal={"mlp@relation_query": [0.5, 4.0], "mhsa@relation_query": [3.0, 0.0]}, index="range")),
    ("control-first-token", ["mlp"], "first",
     dict(seed=205, groups=GROUPS, modules={"mlp": 12}, n_layers=3, stored=["first", "relation_query"],
          signal={"mlp@relation_query": [5.0, 5.0, 5.0]}, constant=[["mlp", "first"]])),
]


def plain(value):
    if isinstance(value, np.generic):
        return value.item()
    return value


def plain_record(record):
    return {k: plain(v) for k, v in record.items()}


def main():
    fits = []
    for name, group, spec in FITS:
        train_x, train_y, test_x, test_y = probe_arrays(**spec)
        records = [
            plain_record(_fit_regression(train_x, train_y, test_x, test_y, layer, group))
            for layer in range(spec["n_layers"])
        ]
        fits.append({"name": name, "relation_group_id": group, "arrays": spec, "records": records})
    pipelines = []
    for name, modules, position, spec in PIPELINES:
        frame = activation_frame(**spec)
        records = perform_classification_by_relation_group(
            prompting_results=frame, vertical=True, position=position, **flags(*modules)
        )
        pipelines.append({"name": name, "modules": modules, "position": position, "frame": spec,
                          "records": [plain_record(r) for r in records]})
    path = Path(os.environ["LMR_FIXTURES_OUT"]) / OUTPUT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"fits": fits, "pipelines": pipelines}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
