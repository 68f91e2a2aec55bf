"""Grader tests for MCTS.find_best_action and OpenLoopMCTS.find_best_action (PUCT selection).

The statistics of a node are set by hand and the choice is compared with the PUCT rule
written out below; full searches with a toy persuasion dialogue (our stand-in agents and
planner, seeded) are compared with root and tree statistics recorded from the reference.
"""
import json
import math
import random
import zlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from core.game import PersuasionGame
from core.helpers import DialogSession
from core.mcts import MCTS, OpenLoopMCTS

_isclose = math.isclose
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PLANNERS = [MCTS, OpenLoopMCTS]
SYS_ACTS = PersuasionGame.get_game_ontology()["system"]["dialog_acts"]
USER_ACTS = PersuasionGame.get_game_ontology()["user"]["dialog_acts"]


# ---------------------------------------------------------------------------------------------
# hand-set node statistics


def make_planner(cls, cpuct=1.0, q0=0.0, max_realizations=3, game=None, player=None):
    configs = SimpleNamespace(cpuct=cpuct, Q_0=q0, max_realizations=max_realizations)
    return cls(game, player, configs)


def set_node(mcts, key, valid, q, n, prior, visits=None, num_acts=None):
    """Statistics in the layout the planner keeps: numpy act ids, dicts per act, prior array."""
    num_acts = num_acts or (max(valid) + 1 if len(valid) else 1)
    mcts.valid_moves[key] = np.array(valid, dtype=np.int64)
    acts = list(mcts.valid_moves[key])
    mcts.Q[key] = {a: float(q[i]) for i, a in enumerate(acts)}
    mcts.Nsa[key] = {a: int(n[i]) for i, a in enumerate(acts)}
    mcts.Ns[key] = int(sum(n)) if visits is None else visits
    p = np.zeros(num_acts)
    for i, a in enumerate(acts):
        p[a] = prior[i]
    mcts.P[key] = p
    return mcts


def puct_choice(mcts, key):
    """The selection rule written out independently: first act with the strictly highest score."""
    total = mcts.Ns[key] if mcts.Ns[key] != 0 else 1e-8
    best, best_score = -1, -math.inf
    for a in mcts.valid_moves[key]:
        score = mcts.Q[key][a] + mcts.configs.cpuct * mcts.P[key][a] * math.sqrt(total) / (1 + mcts.Nsa[key][a])
        if score > best_score:
            best, best_score = a, score
    return best


KEY = "greeting__logical appeal"


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_large_constant_prefers_the_unexplored_act(cls):
    # scores with c=1, Ns=10: 0.5+0.2*3.162/6=0.605, 0.2+0.3*3.162/2=0.674, 0.0+0.5*3.162/1=1.581
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [0, 1, 2], [0.5, 0.2, 0.0], [5, 4, 0], [0.2, 0.3, 0.5], visits=10)
    assert mcts.find_best_action(KEY) == 2


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_small_constant_prefers_the_best_value(cls):
    # scores with c=0.1: 0.5105, 0.2474, 0.1581
    mcts = set_node(make_planner(cls, cpuct=0.1), KEY, [0, 1, 2], [0.5, 0.2, 0.0], [5, 4, 0], [0.2, 0.3, 0.5], visits=10)
    assert mcts.find_best_action(KEY) == 0


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_middle_constant_balances_value_and_visits(cls):
    # c=0.25, q=(0.5, 0.2, 0.1): 0.526, 0.319, 0.495 -> act 0
    mcts = set_node(make_planner(cls, cpuct=0.25), KEY, [0, 1, 2], [0.5, 0.2, 0.1], [5, 4, 0], [0.2, 0.3, 0.5], visits=10)
    assert mcts.find_best_action(KEY) == 0
    # c=0.3, q=(0.3, 0.2, 0.1): 0.332, 0.342, 0.574 -> act 2
    mcts = set_node(make_planner(cls, cpuct=0.3), KEY, [0, 1, 2], [0.3, 0.2, 0.1], [5, 4, 0], [0.2, 0.3, 0.5], visits=10)
    assert mcts.find_best_action(KEY) == 2


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_zero_constant_is_greedy_in_value(cls):
    mcts = set_node(make_planner(cls, cpuct=0.0), KEY, [3, 5, 8], [-0.2, 0.4, 0.1], [1, 7, 0], [0.0, 0.0, 1.0])
    assert mcts.find_best_action(KEY) == 5


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_visit_count_of_an_act_divides_its_bonus(cls):
    # same value and prior; the act visited less gets the larger bonus
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [0, 1, 2], [0.1, 0.1, 0.1], [6, 2, 4], [1 / 3, 1 / 3, 1 / 3])
    assert mcts.find_best_action(KEY) == 1
    # Ns = 4: bonus 1 * 0.5 * sqrt(4) / (1 + 3) = 0.25 for act 0 beats the value 0.2 of act 1 (prior 0)
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [0, 1], [0.0, 0.2], [3, 1], [0.5, 0.0])
    assert mcts.find_best_action(KEY) == 0
    # (1 + 3) divides: 0.25 beats 0.22 (dividing by 5 instead would give 0.2 and pick act 1)
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [0, 1], [0.0, 0.22], [3, 1], [0.5, 0.0])
    assert mcts.find_best_action(KEY) == 0


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_fresh_node_follows_the_prior(cls):
    # a node never visited (Ns = 0): all values equal Q_0, the prior decides, not the order
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [0, 4, 7, 9], [0.0] * 4, [0] * 4, [0.1, 0.2, 0.6, 0.1], visits=0)
    assert mcts.find_best_action(KEY) == 7
    mcts = set_node(make_planner(cls, cpuct=1.0, q0=0.25), KEY, [2, 3], [0.25, 0.25], [0, 0], [0.3, 0.7], visits=0)
    assert mcts.find_best_action(KEY) == 3


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_fresh_node_bonus_is_tiny(cls):
    # Ns = 0 is treated as a tiny count (sqrt(1e-8) = 1e-4): the prior only breaks near-ties;
    # a value difference of 1e-3 wins over a large prior
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [0, 1], [0.0, 1e-3], [0, 0], [0.9, 0.1], visits=0)
    assert mcts.find_best_action(KEY) == 1
    # ... while after one visit the same prior dominates
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [0, 1], [0.0, 1e-3], [0, 0], [0.9, 0.1], visits=1)
    assert mcts.find_best_action(KEY) == 0
    # a prior gap of 0.5 is worth 5e-5 at Ns = 0: more than a 4e-5 value gap, less than 6e-5
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [0, 1], [4e-5, 0.0], [0, 0], [0.25, 0.75], visits=0)
    assert mcts.find_best_action(KEY) == 1
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [0, 1], [6e-5, 0.0], [0, 0], [0.25, 0.75], visits=0)
    assert mcts.find_best_action(KEY) == 0


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_ties_go_to_the_first_valid_act(cls):
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [1, 4, 6], [0.3, 0.3, 0.3], [2, 2, 2], [0.2, 0.2, 0.2], visits=6)
    assert mcts.find_best_action(KEY) == 1
    # the order of valid_moves decides, not the act ids
    mcts.valid_moves[KEY] = np.array([6, 4, 1])
    assert mcts.find_best_action(KEY) == 6
    mcts = set_node(make_planner(cls, cpuct=0.0), KEY, [0, 1, 2], [0.1, 0.7, 0.7], [9, 0, 3], [0.8, 0.1, 0.1])
    assert mcts.find_best_action(KEY) == 1


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_single_act(cls):
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [11], [-0.9], [4], [1.0], num_acts=13)
    assert mcts.find_best_action(KEY) == 11
    mcts = set_node(make_planner(cls, cpuct=2.0), KEY, [0], [-1e6], [0], [0.0], visits=0)
    assert mcts.find_best_action(KEY) == 0


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_no_valid_act_gives_minus_one(cls):
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [], [], [], [], visits=3, num_acts=13)
    assert mcts.find_best_action(KEY) == -1


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_only_valid_acts_are_considered(cls):
    # act 2 has the best statistics but is not a valid move here
    mcts = set_node(make_planner(cls, cpuct=1.0), KEY, [0, 1, 2], [0.1, 0.2, 0.9], [1, 1, 0], [0.3, 0.3, 0.4])
    mcts.valid_moves[KEY] = np.array([0, 1])
    assert mcts.find_best_action(KEY) == 1


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_reads_the_statistics_of_the_given_node(cls):
    mcts = make_planner(cls, cpuct=1.0)
    set_node(mcts, "a", [0, 1], [0.9, 0.0], [3, 3], [0.5, 0.5])
    set_node(mcts, "b", [0, 1], [0.0, 0.9], [3, 3], [0.5, 0.5])
    assert mcts.find_best_action("a") == 0
    assert mcts.find_best_action("b") == 1


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_statistics_are_left_unchanged(cls):
    mcts = set_node(make_planner(cls, cpuct=1.3), KEY, [0, 2, 3], [0.1, -0.4, 0.3], [2, 0, 5], [0.5, 0.3, 0.2])
    before = (dict(mcts.Q[KEY]), dict(mcts.Nsa[KEY]), mcts.Ns[KEY], mcts.P[KEY].copy(), list(mcts.valid_moves[KEY]))
    mcts.find_best_action(KEY)
    mcts.find_best_action(KEY)
    assert mcts.Q[KEY] == before[0] and mcts.Nsa[KEY] == before[1] and mcts.Ns[KEY] == before[2]
    assert np.array_equal(mcts.P[KEY], before[3]) and list(mcts.valid_moves[KEY]) == before[4]


@pytest.mark.parametrize("cls", PLANNERS, ids=lambda c: c.__name__)
def test_agrees_with_the_puct_rule_on_random_statistics(cls):
    rng = random.Random(20261129)
    for case in range(400):
        num_acts = len(SYS_ACTS)
        valid = rng.sample(range(num_acts), rng.randint(1, num_acts))
        n = [rng.choice([0, 0, 1, 2, 3, rng.randint(0, 40)]) for _ in valid]
        q = [round(rng.uniform(-1, 1), 3) for _ in valid]
        w = [rng.random() ** 2 for _ in valid]
        prior = [x / sum(w) for x in w]
        visits = rng.choice([sum(n), sum(n) + rng.randint(0, 5), 0 if sum(n) == 0 else sum(n)])
        mcts = make_planner(cls, cpuct=rng.choice([0.0, 0.1, 0.5, 1.0, 2.5, 10.0]))
        set_node(mcts, KEY, valid, q, n, prior, visits=visits, num_acts=num_acts)
        assert mcts.find_best_action(KEY) == puct_choice(mcts, KEY), f"case {case}"


# ---------------------------------------------------------------------------------------------
# full searches over a toy persuasion dialogue (stand-ins for the LLM agents and the planner)


def _digest(text):
    return zlib.crc32(text.encode("utf-8"))


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
        rng = np.random.default_rng(_digest("valid|" + state.to_string_rep(keep_sys_da=True, keep_user_da=True)))
        valid = (rng.random(len(SYS_ACTS)) < 0.6).astype(int)
        valid[rng.integers(len(SYS_ACTS))] = 1
        return valid

    def predict(self, state):
        rng = np.random.default_rng(_digest("predict|" + state.to_string_rep(keep_sys_da=True, keep_user_da=True)))
        prior = rng.dirichlet(np.full(len(SYS_ACTS), 2.0))
        value = float(np.round(rng.uniform(-0.6, 0.6), 3))
        return prior, value


def run_search(kind, num_simulations, cpuct, q0, seed, max_turns=5, max_realizations=3):
    """Runs `num_simulations` searches from the empty dialogue; returns the planner."""
    game = PersuasionGame(ToySystem(), ToyUser(seed), max_conv_turns=max_turns)
    cls = {"MCTS": MCTS, "OpenLoopMCTS": OpenLoopMCTS}[kind]
    mcts = make_planner(cls, cpuct=cpuct, q0=q0, max_realizations=max_realizations, game=game, player=ToyPlanner())
    np.random.seed(seed)
    root = DialogSession(PersuasionGame.SYS, PersuasionGame.USR)
    for _ in range(num_simulations):
        mcts.search(root)
    return mcts


def tree_statistics(mcts):
    """Per node: visits, then (act, visits, value) for every valid act, in a JSON-friendly form."""
    return {
        key: {
            "Ns": int(mcts.Ns[key]),
            "acts": [[int(a), int(mcts.Nsa[key][a]), float(mcts.Q[key][a])] for a in mcts.valid_moves[key]],
        }
        for key in sorted(mcts.Ns)
    }


def _load_runs():
    return json.loads((FIXTURES / "search_runs.json").read_text(encoding="utf-8"))["runs"]


def _run_id(run):
    return f"{run['kind']}-sims{run['num_simulations']}-c{run['cpuct']}-q{run['q0']}-s{run['seed']}"


@pytest.mark.parametrize("run", _load_runs(), ids=_run_id)
def test_search_reproduces_recorded_tree(run):
    mcts = run_search(run["kind"], run["num_simulations"], run["cpuct"], run["q0"], run["seed"])
    got = tree_statistics(mcts)
    want = run["tree"]
    root = ""  # both planners key the empty dialogue as ""
    # root first, for a readable failure
    assert got[root]["Ns"] == want[root]["Ns"]
    assert [a[:2] for a in got[root]["acts"]] == [a[:2] for a in want[root]["acts"]]
    assert sorted(got) == sorted(want)
    for key, node in want.items():
        assert got[key]["Ns"] == node["Ns"], key
        for (a, n, q), (wa, wn, wq) in zip(got[key]["acts"], node["acts"]):
            assert (a, n) == (wa, wn), key
            assert _isclose(q, wq, rel_tol=1e-9, abs_tol=1e-12), key


def test_recorded_searches_cover_both_planners_and_several_settings():
    runs = _load_runs()
    assert {r["kind"] for r in runs} == {"MCTS", "OpenLoopMCTS"}
    assert len({(r["cpuct"], r["q0"]) for r in runs}) >= 3
