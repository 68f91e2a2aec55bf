"""A toy persuasion dialogue for whole searches (ours, not upstream code).

Used by the grader tests and by generators/search_runs.py, which records the tree
statistics of the searches below from the reference implementation. The language-model
agents and planner of GDP-Zero are replaced by seeded stand-ins, so a search needs no
model and is reproducible:

- ToySystem: the system utterance only names the act;
- ToyUser: a seeded random user reaction, more and more inclined to donate;
- ToyPlanner: valid acts, prior (Dirichlet) and value from a hash of the dialogue so far;
- CountingPlanner: like ToyPlanner, but the prior is made the way GDP-Zero's prompted
  planner makes it (add-one smoothed counts of a few sampled acts), so that several acts
  share exactly the same prior and ties between them are common.
"""
import random
import zlib
from types import SimpleNamespace

import numpy as np

from core.game import PersuasionGame
from core.helpers import DialogSession
from core.mcts import MCTS, OpenLoopMCTS

SYS_ACTS = PersuasionGame.get_game_ontology()["system"]["dialog_acts"]
USER_ACTS = PersuasionGame.get_game_ontology()["user"]["dialog_acts"]
PLANNER_CLASSES = {"MCTS": MCTS, "OpenLoopMCTS": OpenLoopMCTS}


def _digest(text):
    return zlib.crc32(text.encode("utf-8"))


def _history_key(state):
    return state.to_string_rep(keep_sys_da=True, keep_user_da=True)


class ToySystem:
    """System agent: the utterance only names the act."""

    dialog_acts = SYS_ACTS

    def get_utterance(self, state, action):
        return f"[{SYS_ACTS[action]}] turn {len(state)}"


class ToyUser:
    """User agent: a seeded random reaction, leaning towards donating as the dialogue goes on."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def get_utterance_w_da(self, state, action):
        last_sys_act = state.history[-1][1]
        weights = [1.0, 2.0, 3.0, 2.0, 0.1 + 0.1 * len(state) + 0.2 * (SYS_ACTS.index(last_sys_act) % 3)]
        da = self.rng.choices(USER_ACTS, weights=weights)[0]
        return da, f"{da} #{self.rng.randint(0, 2)}"


class ToyPlanner:
    """Prior and value from a hash of the dialogue so far (stands in for the prompted LLM)."""

    dialog_acts = SYS_ACTS

    def get_valid_moves(self, state):
        if len(state) == 0:
            return np.array([1 if i in (0, 5, 11) else 0 for i in range(len(SYS_ACTS))])
        rng = np.random.default_rng(_digest("valid|" + _history_key(state)))
        valid = (rng.random(len(SYS_ACTS)) < 0.6).astype(int)
        valid[rng.integers(len(SYS_ACTS))] = 1
        return valid

    def predict(self, state):
        rng = np.random.default_rng(_digest("predict|" + _history_key(state)))
        prior = rng.dirichlet(np.full(len(SYS_ACTS), 2.0))
        value = float(np.round(rng.uniform(-0.6, 0.6), 3))
        return prior, value


class CountingPlanner(ToyPlanner):
    """The prior is 1 + how often each act came up in 8 draws, normalised (as GDP-Zero's planner does)."""

    def predict(self, state):
        rng = np.random.default_rng(_digest("count|" + _history_key(state)))
        counts = np.bincount(rng.integers(0, len(SYS_ACTS), size=8), minlength=len(SYS_ACTS))
        prior = (counts + 1.0) / (counts + 1.0).sum()
        value = float(np.round(rng.uniform(-0.6, 0.6), 2))
        return prior, value


PLANNERS = {"hashed": ToyPlanner, "counting": CountingPlanner}


def make_planner(kind, cpuct, q0, max_realizations=3, game=None, player=None):
    configs = SimpleNamespace(cpuct=cpuct, Q_0=q0, max_realizations=max_realizations)
    return PLANNER_CLASSES[kind](game, player, configs)


def run_search(kind, num_simulations, cpuct, q0, seed, prior="hashed", max_turns=5, max_realizations=3):
    """Runs `num_simulations` searches from the empty dialogue; returns the MCTS object."""
    game = PersuasionGame(ToySystem(), ToyUser(seed), max_conv_turns=max_turns)
    mcts = make_planner(kind, cpuct, q0, max_realizations, game=game, player=PLANNERS[prior]())
    np.random.seed(seed)  # the open-loop search samples realisations with numpy's global generator
    root = DialogSession(PersuasionGame.SYS, PersuasionGame.USR)
    for _ in range(num_simulations):
        mcts.search(root)
    return mcts


def tree_statistics(mcts):
    """Per node: its visits, then [act, visits, value] for every valid act, JSON-friendly."""
    return {
        key: {
            "Ns": int(mcts.Ns[key]),
            "acts": [[int(a), int(mcts.Nsa[key][a]), float(mcts.Q[key][a])] for a in mcts.valid_moves[key]],
        }
        for key in sorted(mcts.Ns)
    }
