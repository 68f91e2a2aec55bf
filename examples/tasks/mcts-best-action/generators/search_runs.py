"""Writes fixtures/search_runs.json: full searches of the reference OpenLoopMCTS (after the
extract-function step, so every selection goes through the reference find_best_action).

Each run plans from the initial state of PersuasionGame(max_turns) with the given c_puct and
number of simulations, and keeps the root's visit counts and values, the principal variation
and the number of expanded nodes. Run by `lmr record` from the root of the reference tree
with $LMR_FIXTURES_OUT set. The game and the search are deterministic; nothing here is random.
"""
import json
import os
import random
import sys

random.seed(0)  # nothing below draws from it; seeded so that the contract holds if that changes
sys.path.insert(0, os.getcwd())

from core.game import PersuasionGame  # noqa: E402
from core.mcts import OpenLoopMCTS  # noqa: E402  (the reference, prepared)

RUNS = [  # (max_turns, c_puct, num_simulations)
    (5, 1.0, 400),
    (5, 2.0, 60),
    (4, 0.5, 150),
    (4, 0.0, 100),  # no exploration term: every choice is by value, ties to the first act
]


def write_json(rel, data):
    path = os.path.join(os.environ["LMR_FIXTURES_OUT"], rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # json writes floats with repr (the shortest text that reads back to the same double)
    text = json.dumps(data, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=True) + "\n"
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


runs = []
for max_turns, c_puct, num_simulations in RUNS:
    game = PersuasionGame(max_turns=max_turns)
    mcts = OpenLoopMCTS(game, c_puct=c_puct, num_simulations=num_simulations)
    root = game.initial_state()
    mcts.plan(root)
    key = mcts.node_key(root)
    runs.append({
        "max_turns": max_turns,
        "c_puct": c_puct,
        "num_simulations": num_simulations,
        "root_visits": {a: int(n) for a, n in mcts.N[key].items()},
        "root_q": {a: float(q) for a, q in mcts.Q[key].items()},
        "principal_variation": list(mcts.principal_variation(root)),
        "nodes": len(mcts.P),
    })

write_json("fixtures/search_runs.json", {
    "about": "Written by generators/search_runs.py from the reference OpenLoopMCTS of mcts-search "
             "(after the extract-function step): statistics at the root after plan(initial_state).",
    "runs": runs,
})
