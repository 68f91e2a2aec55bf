"""Grader tests for OpenLoopMCTS.find_best_action (the PUCT selection rule).

Node statistics are set up the way a search leaves them: the acts are the game's legal acts in
their order, the priors are the game's prior at that node (the dict the search passes), Ns is
the sum of the acts' visits, and an act never visited has Q = 0.
"""
import copy
import json
import math
import random
from pathlib import Path

import pytest

from core.game import ACTIONS, DialogueState, PersuasionGame
from core.mcts import OpenLoopMCTS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDED = json.loads((FIXTURES / "search_runs.json").read_text(encoding="utf-8"))
GAME = PersuasionGame(max_turns=5)


def node(history, n, q, c_puct):
    """A planner whose node `history` holds visits `n` and values `q` (acts in game order)."""
    state = DialogueState(tuple(history))
    mcts = OpenLoopMCTS(GAME, c_puct=c_puct, num_simulations=1)
    key = mcts.node_key(state)
    assert all(q[a] == 0.0 for a in ACTIONS if n[a] == 0), "an act never visited has Q = 0"
    mcts.P[key] = GAME.prior(state)
    mcts.N[key] = {a: n[a] for a in ACTIONS}
    mcts.Q[key] = {a: q[a] for a in ACTIONS}
    mcts.Ns[key] = sum(n.values())
    return mcts, key, GAME.legal_actions(state), mcts.P[key]


def choose(history, n, q, c_puct):
    mcts, key, actions, priors = node(history, n, q, c_puct)
    return mcts.find_best_action(key, actions, priors)


AFTER_GREETING = ("greeting",)
VISITS = {"greeting": 6, "logical_appeal": 2, "emotional_appeal": 1, "credibility": 0, "ask_donation": 1}
VALUES = {"greeting": 0.10, "logical_appeal": 0.30, "emotional_appeal": 0.25, "credibility": 0.0, "ask_donation": 0.35}
# priors after a greeting: greeting .458, logical .190, emotional .168, credibility .144, ask .041


def test_exploration_wins_with_a_large_constant():
    # c_puct 2: scores .514 .700 .783 .908 .479: the unvisited act's bonus wins
    assert choose(AFTER_GREETING, VISITS, VALUES, c_puct=2.0) == "credibility"


def test_value_wins_with_a_small_constant():
    # c_puct 0.1: scores .121 .320 .277 .045 .356: the best value wins
    assert choose(AFTER_GREETING, VISITS, VALUES, c_puct=0.1) == "ask_donation"


def test_middle_constant_balances_value_and_prior():
    # c_puct 0.5: scores .203 .400 .383 .227 .382: neither the best value nor the largest bonus
    assert choose(AFTER_GREETING, VISITS, VALUES, c_puct=0.5) == "logical_appeal"


def test_unit_constant():
    # c_puct 1: scores .307 .500 .516 .454 .414
    assert choose(AFTER_GREETING, VISITS, VALUES, c_puct=1.0) == "emotional_appeal"


def test_zero_constant_is_greedy_in_q():
    assert choose(AFTER_GREETING, VISITS, VALUES, c_puct=0.0) == "ask_donation"


def test_node_never_visited_picks_the_first_act():
    # Ns = 0: no exploration bonus and every Q is 0, so all scores tie; the largest prior here
    # is emotional_appeal's, the first act in order is greeting
    history = ("greeting", "logical_appeal", "emotional_appeal", "credibility")
    zero = {a: 0 for a in ACTIONS}
    assert choose(history, zero, {a: 0.0 for a in ACTIONS}, c_puct=5.0) == "greeting"


def test_ties_go_to_the_first_act_in_order():
    n = {"greeting": 2, "logical_appeal": 1, "emotional_appeal": 3, "credibility": 0, "ask_donation": 0}
    q = {"greeting": 0.2, "logical_appeal": 0.3, "emotional_appeal": 0.3, "credibility": 0.0, "ask_donation": 0.0}
    assert choose(AFTER_GREETING, n, q, c_puct=0.0) == "logical_appeal"


def test_statistics_are_not_changed():
    mcts, key, actions, priors = node(AFTER_GREETING, VISITS, VALUES, c_puct=1.0)
    before = copy.deepcopy((mcts.P, mcts.Q, mcts.N, mcts.Ns, priors, actions))
    mcts.find_best_action(key, actions, priors)
    assert (mcts.P, mcts.Q, mcts.N, mcts.Ns, priors, actions) == before


def puct_choice(mcts, key, actions, priors):
    """The rule written out independently; None where the two best scores are too close to call."""
    total = mcts.Ns[key]
    scores = [mcts.Q[key][a] + mcts.c_puct * priors[a] * math.sqrt(total) / (1 + mcts.N[key][a]) for a in actions]
    ranked = sorted(scores, reverse=True)
    if len(ranked) > 1 and ranked[0] - ranked[1] < 1e-9 and ranked[0] != ranked[1]:
        return None  # a float rounding difference could decide it: not a fair check
    return actions[scores.index(ranked[0])]


def test_agrees_with_the_puct_rule_on_random_statistics():
    rng = random.Random(20261129)
    checked = 0
    for _ in range(300):
        turns = rng.randint(0, GAME.max_turns - 1)
        history = [rng.choice([a for a in ACTIONS if a != "ask_donation"]) for _ in range(turns)]
        n = {a: rng.choice([0, rng.randint(1, 30)]) for a in ACTIONS}
        q = {a: round(rng.uniform(0.0, 1.0), 3) if n[a] else 0.0 for a in ACTIONS}
        mcts, key, actions, priors = node(history, n, q, c_puct=rng.choice([0.3, 1.0, 2.5]))
        expected = puct_choice(mcts, key, actions, priors)
        if expected is None:
            continue
        checked += 1
        assert mcts.find_best_action(key, actions, priors) == expected, (history, n, q, mcts.c_puct)
    assert checked > 250


@pytest.mark.parametrize("run", RECORDED["runs"], ids=lambda r: f"turns{r['max_turns']}-sims{r['num_simulations']}-c{r['c_puct']}")
def test_full_search_matches_recorded_statistics(run):
    game = PersuasionGame(max_turns=run["max_turns"])
    mcts = OpenLoopMCTS(game, c_puct=run["c_puct"], num_simulations=run["num_simulations"])
    root = game.initial_state()
    mcts.plan(root)
    key = mcts.node_key(root)
    assert mcts.N[key] == run["root_visits"]
    assert mcts.Q[key] == pytest.approx(run["root_q"], abs=1e-9)
    assert mcts.principal_variation(root) == run["principal_variation"]
    assert len(mcts.P) == run["nodes"]
