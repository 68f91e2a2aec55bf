"""Writes fixtures/probe_scores.json: the reference probing's per-layer scores on seeded hidden states.

Run by `lmr record` from the root of the reference tree (tests/conftest.py executed first, so
main.py's unused heavy imports are stand-ins), with LMR_FIXTURES_OUT naming the output folder.
"""
import json
import os
import random
import sys

import numpy as np

random.seed(0)
np.random.seed(0)

TASK_TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")
sys.path.insert(0, TASK_TESTS)
from hidden_states import CASES, main_args, make_hidden_states  # noqa: E402

from main import probing  # noqa: E402

cases = []
for seed, n_layers, n_first, n_second, dim, separation, clf in CASES:
    first, second = make_hidden_states(seed, n_layers, n_first, n_second, dim, separation)
    acc, f1, auc = probing(first, second, n_layers, main_args(clf), [], [], [])
    cases.append({
        "seed": seed, "layers": n_layers, "first": n_first, "second": n_second, "dim": dim,
        "separation": separation, "clf": clf,
        "acc": [repr(float(v)) for v in acc], "f1": [repr(float(v)) for v in f1], "auc": [repr(float(v)) for v in auc],
    })

out = os.path.join(os.environ["LMR_FIXTURES_OUT"], "fixtures", "probe_scores.json")
os.makedirs(os.path.dirname(out), exist_ok=True)
with open(out, "w") as f:
    f.write(json.dumps({"cases": cases}, indent=1, sort_keys=True) + "\n")
