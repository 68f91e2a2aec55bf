"""Grader tests for OpenLoopMCTS.find_best_action (the PUCT selection rule)."""
import json
import math
import random
from pathlib import Path

import pytest

from core.game import ACTIONS, PersuasionGame
from core.mcts import OpenLoopMCTS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDED = json.loads((FIXTURES / "search_runs.json").read_text(encoding="utf-8"))
KEY = ("greeting",)


def planner_with(q, n, total, c_puct=1.0, key=KEY):
    mcts = OpenLoopMCTS(PersuasionGame(), c_puct=c_puct, num_simulations=1)
    mcts.Q[key] = dict(q)
    mcts.N[key] = dict(n)
    mcts.Ns[key] = total
    mcts.P[key] = {a: 1.0 / len(q) for a in q}
    return mcts


def expected_choice(mcts, key, actions, priors):
    """The PUCT rule written out independently: first action with the highest score."""
    total = mcts.Ns[key]
    scores = [
        mcts.Q[key][a] + mcts.c_puct * priors[a] * math.sqrt(total) / (1 + mcts.N[key][a]) for a in actions
    ]
    return actions[scores.index(max(scores))]


Q = {"a": 0.5, "b": 0.2, "c": 0.0}
N = {"a": 5, "b": 1, "c": 0}
P = {"a": 0.2, "b": 0.3, "c": 0.5}


def test_exploration_bonus_wins_with_a_large_constant():
    # scores: a 0.605, b 0.674, c 1.581
    assert planner_with(Q, N, 10, c_puct=1.0).find_best_action(key=KEY, actions=["a", "b", "c"], priors=P) == "c"


def test_value_wins_with_a_small_constant():
    # scores: a 0.5105, b 0.2474, c 0.1581
    assert planner_with(Q, N, 10, c_puct=0.1).find_best_action(key=KEY, actions=["a", "b", "c"], priors=P) == "a"


def test_middle_constant_picks_the_balanced_action():
    # c_puct 0.25, q (0.5, 0.2, 0.1): a 0.526, b 0.319, c 0.495; c_puct 0.3, q (0.3, 0.2, 0.1): a 0.332, b 0.342, c 0.574
    q = {"a": 0.5, "b": 0.2, "c": 0.1}
    assert planner_with(q, N, 10, c_puct=0.25).find_best_action(KEY, ["a", "b", "c"], P) == "a"
    q = {"a": 0.3, "b": 0.2, "c": 0.1}
    assert planner_with(q, N, 10, c_puct=0.3).find_best_action(KEY, ["a", "b", "c"], P) == "c"


def test_zero_constant_is_greedy_in_q():
    priors = {"a": 0.0, "b": 0.0, "c": 1.0}
    assert planner_with(Q, N, 10, c_puct=0.0).find_best_action(KEY, ["a", "b", "c"], priors) == "a"


def test_unvisited_node_has_no_exploration_term():
    q = {"a": 0.0, "b": 0.3, "c": 0.1}
    zero = {"a": 0, "b": 0, "c": 0}
    assert planner_with(q, zero, 0, c_puct=5.0).find_best_action(KEY, ["a", "b", "c"], P) == "b"


def test_ties_go_to_the_first_action_in_order():
    q = {"a": 0.0, "b": 0.0, "c": 0.0}
    zero = {"a": 0, "b": 0, "c": 0}
    mcts = planner_with(q, zero, 0)
    assert mcts.find_best_action(KEY, ["a", "b", "c"], P) == "a"
    assert mcts.find_best_action(KEY, ["c", "b", "a"], P) == "c"


def test_only_the_given_actions_are_considered():
    mcts = planner_with(Q, N, 10, c_puct=1.0)
    assert mcts.find_best_action(KEY, ["a", "b"], P) == "b"
    assert mcts.find_best_action(KEY, ["a"], P) == "a"


def test_uses_the_priors_it_is_given():
    mcts = planner_with(Q, N, 10, c_puct=1.0)
    mcts.P[KEY] = {"a": 0.0, "b": 0.0, "c": 1.0}
    assert mcts.find_best_action(KEY, ["a", "b", "c"], {"a": 0.9, "b": 0.1, "c": 0.0}) == "a"


def test_statistics_are_not_changed():
    mcts = planner_with(Q, N, 10)
    mcts.find_best_action(KEY, ["a", "b", "c"], P)
    assert mcts.Q[KEY] == Q and mcts.N[KEY] == N and mcts.Ns[KEY] == 10


def test_agrees_with_the_puct_rule_on_random_statistics():
    rng = random.Random(20261129)
    for _ in range(300):
        actions = rng.sample(list(ACTIONS), rng.randint(1, len(ACTIONS)))
        n = {a: rng.randint(0, 30) for a in ACTIONS}
        q = {a: round(rng.uniform(-1, 1), 3) for a in ACTIONS}
        weights = {a: rng.random() for a in ACTIONS}
        priors = {a: w / sum(weights.values()) for a, w in weights.items()}
        mcts = planner_with(q, n, sum(n.values()), c_puct=rng.choice([0.3, 1.0, 2.5]))
        assert mcts.find_best_action(KEY, actions, priors) == expected_choice(mcts, KEY, actions, priors)


@pytest.mark.parametrize("run", RECORDED["runs"], ids=lambda r: f"sims{r['num_simulations']}-c{r['c_puct']}")
def test_full_search_matches_recorded_statistics(run):
    game = PersuasionGame(max_turns=run["max_turns"])
    mcts = OpenLoopMCTS(game, c_puct=run["c_puct"], num_simulations=run["num_simulations"])
    root = game.initial_state()
    mcts.plan(root)
    assert mcts.N[()] == run["root_visits"]
    assert mcts.Q[()] == pytest.approx(run["root_q"], abs=1e-9)
    assert mcts.principal_variation(root) == run["principal_variation"]
    assert len(mcts.P) == run["nodes"]
