"""Writes fixtures/search_runs.json: tree statistics after whole searches, from the reference.

Run by `lmr record` from the root of the reference tree (the upstream with the reference
find_best_action in place), after tests/conftest.py has installed its stand-in for
core.gen_models; writes $LMR_FIXTURES_OUT/fixtures/search_runs.json and nothing else.

Each run is a search over the toy dialogue of tests/toy_dialogue.py: both planners,
several exploration constants and initial values, and two kinds of prior (a Dirichlet
draw, and add-one smoothed counts as GDP-Zero's planner makes them, where many acts share
one prior exactly). While recording, every selection is checked to be decided by the
rule itself and not by rounding: the best score beats the others by more than 1e-9, or
the acts it ties with have exactly the same statistics (then the first valid act wins
in every implementation), so that any correct implementation makes the same choices.
Every node is also checked to satisfy what the tests tell the agent: Ns equals the sum
of the act counts, an act never followed still has the value Q_0.
"""
import json
import math
import os
import random
import sys
from pathlib import Path

import numpy as np

random.seed(0)
np.random.seed(0)

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from core.mcts import MCTS, OpenLoopMCTS  # noqa: E402
from toy_dialogue import run_search, tree_statistics  # noqa: E402

RUNS = [
    # kind, simulations, cpuct, Q_0, seed, prior
    ("OpenLoopMCTS", 40, 1.0, 0.0, 1, "hashed"),
    ("OpenLoopMCTS", 120, 1.0, 0.0, 2, "hashed"),
    ("OpenLoopMCTS", 80, 0.3, 0.25, 3, "hashed"),
    ("OpenLoopMCTS", 150, 2.5, 0.0, 4, "hashed"),
    ("OpenLoopMCTS", 60, 0.0, 0.0, 5, "hashed"),
    ("MCTS", 40, 1.0, 0.0, 6, "hashed"),
    ("MCTS", 100, 0.5, 0.25, 7, "hashed"),
    ("MCTS", 120, 2.0, 0.0, 8, "hashed"),
    ("OpenLoopMCTS", 100, 1.0, 0.0, 9, "counting"),
    ("OpenLoopMCTS", 80, 0.5, 0.25, 10, "counting"),
    ("MCTS", 100, 1.5, 0.0, 11, "counting"),
    ("MCTS", 60, 0.0, 0.1, 12, "counting"),
]


def _same_statistics(mcts, key, a, b):
    same_q = mcts.Q[key][a] == mcts.Q[key][b]
    if mcts.configs.cpuct == 0:
        return same_q
    return same_q and mcts.P[key][a] == mcts.P[key][b] and mcts.Nsa[key][a] == mcts.Nsa[key][b]


def check_selection(mcts, key):
    """Raises unless the choice at `key` is the same for every correct implementation."""
    acts = list(mcts.valid_moves[key])
    assert mcts.Ns[key] == sum(mcts.Nsa[key][a] for a in acts), key
    assert all(mcts.Q[key][a] == mcts.configs.Q_0 for a in acts if mcts.Nsa[key][a] == 0), key
    if mcts.Ns[key] == 0:
        # a fresh node: every value is Q_0, so only the order of the priors matters
        priors = sorted({float(mcts.P[key][a]) for a in acts}, reverse=True)
        assert len(priors) < 2 or priors[0] - priors[1] > 1e-9 * priors[0], key
        return
    root = math.sqrt(mcts.Ns[key])
    c = mcts.configs.cpuct
    scores = {a: mcts.Q[key][a] + c * mcts.P[key][a] * root / (1 + mcts.Nsa[key][a]) for a in acts}
    best = max(scores.values())
    near = [a for a in acts if scores[a] >= best - 1e-9 * max(1.0, abs(best))]
    assert all(_same_statistics(mcts, key, near[0], a) for a in near[1:]), (key, near, scores)


def checked(original):
    def find_best_action(self, hashable_state):
        check_selection(self, hashable_state)
        return original(self, hashable_state)

    return find_best_action


for cls in (MCTS, OpenLoopMCTS):
    cls.find_best_action = checked(cls.__dict__["find_best_action"])

runs = []
for kind, sims, cpuct, q0, seed, prior in RUNS:
    mcts = run_search(kind, sims, cpuct, q0, seed, prior=prior)
    for key in mcts.Ns:
        check_selection(mcts, key)
    runs.append({"kind": kind, "num_simulations": sims, "cpuct": cpuct, "q0": q0, "seed": seed, "prior": prior, "tree": tree_statistics(mcts)})

document = {
    "note": "Tree statistics after whole searches over the toy dialogue of tests/toy_dialogue.py, recorded from the reference implementation by generators/search_runs.py.",
    "runs": runs,
}
out = Path(os.environ["LMR_FIXTURES_OUT"]) / "fixtures" / "search_runs.json"
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(json.dumps(document, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
