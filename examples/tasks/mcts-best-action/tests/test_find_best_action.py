"""Grader tests for OpenLoopMCTS.find_best_action (the PUCT selection rule).

Node statistics are set up the way a search leaves them: the acts are the game's legal acts in
their order, the priors are the game's prior at that node (the dict the search passes), Ns is
the sum of the acts' visits, and an act never visited has Q = 0.
"""
import json
import math
import random
from pathlib import Path

import pytest
from lmr_bridge import probe

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDED = json.loads((FIXTURES / "search_runs.json").read_text(encoding="utf-8"))
# the game's acts, in its order (core/game.py's ACTIONS; the tests do not import the workspace)
ACTIONS = ("greeting", "logical_appeal", "emotional_appeal", "credibility", "ask_donation")
MAX_TURNS = 5


@probe
def best_action(history, n, q, priors, c_puct):
    """In the candidate: a planner whose node `history` holds visits `n`, values `q` and
    `priors` (every act legal), asked for its best act; with what its statistics were
    before and after, to check the call leaves them alone."""
    from core.game import DialogueState, PersuasionGame
    from core.mcts import OpenLoopMCTS

    game = PersuasionGame(max_turns=5)
    mcts = OpenLoopMCTS(game, c_puct=c_puct, num_simulations=1)
    key = mcts.node_key(DialogueState(tuple(history)))
    acts = list(n)
    mcts.P[key] = dict(priors)
    mcts.N[key] = dict(n)
    mcts.Q[key] = dict(q)
    mcts.Ns[key] = sum(n.values())

    def snapshot():
        return [dict(mcts.P[key]), dict(mcts.Q[key]), dict(mcts.N[key]), mcts.Ns[key], dict(priors), list(acts)]

    before = snapshot()
    chosen = mcts.find_best_action(key, acts, priors)
    return {"chosen": chosen, "before": before, "after": snapshot()}


@probe
def full_search(max_turns, c_puct, num_simulations):
    """In the candidate: a whole search from the root, and what it left at the root."""
    from core.game import PersuasionGame
    from core.mcts import OpenLoopMCTS

    game = PersuasionGame(max_turns=max_turns)
    mcts = OpenLoopMCTS(game, c_puct=c_puct, num_simulations=num_simulations)
    root = game.initial_state()
    mcts.plan(root)
    key = mcts.node_key(root)
    return {"visits": dict(mcts.N[key]), "q": dict(mcts.Q[key]), "pv": list(mcts.principal_variation(root)), "nodes": len(mcts.P)}


def choose(history, n, q, c_puct, priors):
    assert all(q[a] == 0.0 for a in ACTIONS if n[a] == 0), "an act never visited has Q = 0"
    return best_action(list(history), {a: n[a] for a in ACTIONS}, {a: q[a] for a in ACTIONS}, {a: priors[a] for a in ACTIONS}, c_puct)["chosen"]


AFTER_GREETING = ("greeting",)
VISITS = {"greeting": 6, "logical_appeal": 2, "emotional_appeal": 1, "credibility": 0, "ask_donation": 1}
VALUES = {"greeting": 0.10, "logical_appeal": 0.30, "emotional_appeal": 0.25, "credibility": 0.0, "ask_donation": 0.35}
# the game's priors after a greeting, to three places (the tests give them; the planner is asked with them)
PRIORS = {"greeting": 0.458, "logical_appeal": 0.190, "emotional_appeal": 0.168, "credibility": 0.144, "ask_donation": 0.041}


def test_exploration_wins_with_a_large_constant():
    # c_puct 2: scores .514 .700 .783 .908 .479: the unvisited act's bonus wins
    assert choose(AFTER_GREETING, VISITS, VALUES, c_puct=2.0, priors=PRIORS) == "credibility"


def test_value_wins_with_a_small_constant():
    # c_puct 0.1: scores .121 .320 .277 .045 .356: the best value wins
    assert choose(AFTER_GREETING, VISITS, VALUES, c_puct=0.1, priors=PRIORS) == "ask_donation"


def test_middle_constant_balances_value_and_prior():
    # c_puct 0.5: scores .203 .400 .383 .227 .382: neither the best value nor the largest bonus
    assert choose(AFTER_GREETING, VISITS, VALUES, c_puct=0.5, priors=PRIORS) == "logical_appeal"


def test_unit_constant():
    # c_puct 1: scores .307 .500 .516 .454 .414
    assert choose(AFTER_GREETING, VISITS, VALUES, c_puct=1.0, priors=PRIORS) == "emotional_appeal"


def test_zero_constant_is_greedy_in_q():
    assert choose(AFTER_GREETING, VISITS, VALUES, c_puct=0.0, priors=PRIORS) == "ask_donation"


def test_node_never_visited_picks_the_first_act():
    # Ns = 0: no exploration bonus and every Q is 0, so all scores tie; the largest prior here
    # is emotional_appeal's, the first act in order is greeting
    history = ("greeting", "logical_appeal", "emotional_appeal", "credibility")
    zero = {a: 0 for a in ACTIONS}
    priors = {"greeting": 0.05, "logical_appeal": 0.2, "emotional_appeal": 0.4, "credibility": 0.15, "ask_donation": 0.2}
    assert choose(history, zero, {a: 0.0 for a in ACTIONS}, c_puct=5.0, priors=priors) == "greeting"


def test_ties_go_to_the_first_act_in_order():
    n = {"greeting": 2, "logical_appeal": 1, "emotional_appeal": 3, "credibility": 0, "ask_donation": 0}
    q = {"greeting": 0.2, "logical_appeal": 0.3, "emotional_appeal": 0.3, "credibility": 0.0, "ask_donation": 0.0}
    assert choose(AFTER_GREETING, n, q, c_puct=0.0, priors=PRIORS) == "logical_appeal"


def test_statistics_are_not_changed():
    got = best_action(list(AFTER_GREETING), VISITS, VALUES, PRIORS, 1.0)
    assert got["after"] == got["before"]
    assert got["before"] == [PRIORS, VALUES, VISITS, sum(VISITS.values()), PRIORS, list(ACTIONS)]


def puct_choice(n, q, priors, c_puct):
    """The rule written out independently; None where the two best scores are too close to call."""
    total = sum(n.values())
    scores = [q[a] + c_puct * priors[a] * math.sqrt(total) / (1 + n[a]) for a in ACTIONS]
    ranked = sorted(scores, reverse=True)
    if len(ranked) > 1 and ranked[0] - ranked[1] < 1e-9 and ranked[0] != ranked[1]:
        return None  # a float rounding difference could decide it: not a fair check
    return ACTIONS[scores.index(ranked[0])]


@probe
def best_actions(cases):
    """best_action for many statistics at once (one round trip)."""
    return [best_action(*case)["chosen"] for case in cases]


def test_agrees_with_the_puct_rule_on_random_statistics():
    rng = random.Random(20261129)
    cases, expected = [], []
    for _ in range(300):
        turns = rng.randint(0, MAX_TURNS - 1)
        history = [rng.choice([a for a in ACTIONS if a != "ask_donation"]) for _ in range(turns)]
        n = {a: rng.choice([0, rng.randint(1, 30)]) for a in ACTIONS}
        q = {a: round(rng.uniform(0.0, 1.0), 3) if n[a] else 0.0 for a in ACTIONS}
        weights = [rng.uniform(0.05, 1.0) for _ in ACTIONS]
        priors = {a: w / sum(weights) for a, w in zip(ACTIONS, weights)}
        c_puct = rng.choice([0.3, 1.0, 2.5])
        want = puct_choice(n, q, priors, c_puct)
        if want is None:
            continue
        cases.append([history, n, q, priors, c_puct])
        expected.append(want)
    assert len(cases) > 250
    got = best_actions(cases)
    for case, g, e in zip(cases, got, expected):
        assert g == e, case


@pytest.mark.parametrize("run", RECORDED["runs"], ids=lambda r: f"turns{r['max_turns']}-sims{r['num_simulations']}-c{r['c_puct']}")
def test_full_search_matches_recorded_statistics(run):
    got = full_search(run["max_turns"], run["c_puct"], run["num_simulations"])
    assert got["visits"] == run["root_visits"]
    assert pytest.approx(run["root_q"], abs=1e-9) == got["q"]
    assert got["pv"] == run["principal_variation"]
    assert got["nodes"] == run["nodes"]
