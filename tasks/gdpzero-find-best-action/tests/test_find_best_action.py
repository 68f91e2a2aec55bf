"""Grader tests for MCTS.find_best_action and OpenLoopMCTS.find_best_action (PUCT selection).

Every node these tests ask about holds statistics that a search can hold: it is expanded
by the planner's own `_init_node` (valid acts in increasing order, every value Q_0, every
count 0, the prior restricted to the valid acts and renormalised), then updated only the
way the backup of `search` updates it (the act's running mean, Ns and that act's count
each grow by one). So Ns is always the sum of the act counts, and an act never followed
keeps the value Q_0. Nothing else about the statistics is assumed.

- hand-made nodes, each checking one part of the rule (expected choices worked out in the
  comments);
- nodes grown step by step as a search grows them, compared with the rule written out here;
- whole searches over a toy dialogue (tests/toy_dialogue.py), compared with the trees
  recorded from the reference by generators/search_runs.py.

The planners live in the candidate process (lmr_bridge): the probes below build and grow the
nodes there (with the @probe_helper functions, and toy_dialogue.py, a candidate file) and
return the acts chosen and the statistics asked for, as plain data. The expected choices are
worked out here: by hand in the comments, or by the rule written out here over statistics
this process tracks itself (OracleNode), never over statistics the candidate reports.
"""
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from lmr_bridge import probe, probe_helper

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KINDS = ["MCTS", "OpenLoopMCTS"]
# len(PersuasionGame.get_game_ontology()["system"]["dialog_acts"]) (toy_dialogue.SYS_ACTS): the
# persuader's 13 acts (the tests do not import the workspace)
NUM_ACTS = 13


# ---------------------------------------------------------------------------------------------
# nodes as a search makes them (in the candidate)


@probe_helper
class FixedPlanner:
    """A planner whose valid acts and prior are given: what `_init_node` asks of the player."""

    def __init__(self, valid, weights):
        from toy_dialogue import SYS_ACTS

        self.dialog_acts = SYS_ACTS
        self.valid, self.weights = valid, weights

    def get_valid_moves(self, state):
        return np.array([1 if a in self.valid else 0 for a in range(len(self.dialog_acts))])

    def predict(self, state):
        prior = np.full(len(self.dialog_acts), 0.01)  # mass on invalid acts: `_init_node` removes it
        for a, w in zip(self.valid, self.weights):
            prior[a] = w
        return prior, 0.0


@probe_helper
def dialogue(*sys_acts):
    """A dialogue in which the persuader used `sys_acts` (the persuadee answered neutrally)."""
    from core.game import PersuasionGame
    from core.helpers import DialogSession

    state = DialogSession(PersuasionGame.SYS, PersuasionGame.USR)
    for act in sys_acts:
        state.add_single(PersuasionGame.SYS, act, f"[{act}]")
        state.add_single(PersuasionGame.USR, PersuasionGame.U_Neutral, "ok")
    return state


@probe_helper
def expand(mcts, valid, weights, state=None):
    """Expands a node with the planner's own `_init_node`; returns its key."""
    state = state if state is not None else dialogue()
    mcts.player = FixedPlanner(valid, weights)
    mcts._init_node(state)
    return mcts._to_string_rep(state)


@probe_helper
def backup(mcts, key, act, value):
    """What `search` does to the node after following `act` and getting `value` back."""
    n = mcts.Nsa[key][act]
    mcts.Q[key][act] = (n * mcts.Q[key][act] + value) / (n + 1)
    mcts.Ns[key] += 1
    mcts.Nsa[key][act] += 1


@probe_helper
def node(kind, valid, weights, visits=(), cpuct=1.0, q0=0.0):
    """A planner holding one node: expanded, then one backup per (act, value) in `visits`."""
    from toy_dialogue import make_planner

    mcts = make_planner(kind, cpuct, q0)
    key = expand(mcts, valid, weights)
    for act, value in visits:
        backup(mcts, key, act, value)
    return mcts, key


@probe
def chosen(kind, valid, weights, visits=(), cpuct=1.0, q0=0.0):
    """In the candidate: the act find_best_action chooses at node(kind, valid, weights, visits, cpuct, q0)."""
    mcts, key = node(kind, valid, weights, visits, cpuct=cpuct, q0=q0)
    return mcts.find_best_action(key)


# ---------------------------------------------------------------------------------------------
# the same nodes, tracked here


class OracleNode:
    """A node's statistics as `_init_node` and the backup leave them, tracked in this process."""

    def __init__(self, valid, weights, cpuct, q0):
        mask = np.array([1 if a in valid else 0 for a in range(NUM_ACTS)])
        prior = np.full(NUM_ACTS, 0.01)
        for a, w in zip(valid, weights):
            prior[a] = w
        self.P = prior * mask
        self.P /= np.sum(self.P)
        self.valid = sorted(valid)
        self.cpuct = cpuct
        self.Q = {a: q0 for a in self.valid}
        self.Nsa = {a: 0 for a in self.valid}
        self.Ns = 0

    def backup(self, act, value):
        n = self.Nsa[act]
        self.Q[act] = (n * self.Q[act] + value) / (n + 1)
        self.Ns += 1
        self.Nsa[act] += 1


def puct_scores(stats):
    """The selection rule written out: act -> score, in the order of the valid acts."""
    visits = stats.Ns if stats.Ns > 0 else 1e-8
    return {
        a: stats.Q[a] + stats.cpuct * stats.P[a] * math.sqrt(visits) / (1 + stats.Nsa[a])
        for a in stats.valid
    }


# ---------------------------------------------------------------------------------------------
# hand-made nodes


@pytest.mark.parametrize("kind", KINDS)
def test_large_exploration_constant_follows_the_bonus(kind):
    # acts 0, 1, 2 with priors 0.5, 0.3, 0.2; values 0.6 (6 visits), 0.1 (3), -0.1 (1); Ns = 10
    # c = 20: 0.6 + 20*0.5*3.162/7 = 5.12, 0.1 + 20*0.3*3.162/4 = 4.84, -0.1 + 20*0.2*3.162/2 = 6.22
    visits = [(0, 0.6)] * 6 + [(1, 0.1)] * 3 + [(2, -0.1)]
    assert chosen(kind, [0, 1, 2], [0.5, 0.3, 0.2], visits, cpuct=20.0) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_small_exploration_constant_follows_the_value(kind):
    # the node of the test above with c = 0.1: 0.623, 0.124, -0.068
    visits = [(0, 0.6)] * 6 + [(1, 0.1)] * 3 + [(2, -0.1)]
    assert chosen(kind, [0, 1, 2], [0.5, 0.3, 0.2], visits, cpuct=0.1) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_middle_exploration_constant_balances_value_and_bonus(kind):
    # values 0.2 (6 visits), 0.1 (3), -0.1 (1), priors 0.5, 0.3, 0.2; Ns = 10
    visits = [(0, 0.2)] * 6 + [(1, 0.1)] * 3 + [(2, -0.1)]
    # c = 4: 0.2 + 4*0.5*3.162/7 = 1.104, 0.1 + 4*0.3*3.162/4 = 1.049, -0.1 + 4*0.2*3.162/2 = 1.165
    assert chosen(kind, [0, 1, 2], [0.5, 0.3, 0.2], visits, cpuct=4.0) == 2
    # c = 3: 0.878, 0.812, 0.849
    assert chosen(kind, [0, 1, 2], [0.5, 0.3, 0.2], visits, cpuct=3.0) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_zero_exploration_constant_is_greedy_in_value(kind):
    # c = 0: the values alone; acts never followed keep Q_0 = -0.5 and lose to act 5's 0.3
    visits = [(3, -0.2), (5, 0.4), (5, 0.2), (8, 0.1)]
    assert chosen(kind, [3, 5, 8, 9], [0.1, 0.1, 0.1, 0.7], visits, cpuct=0.0, q0=-0.5) == 5


@pytest.mark.parametrize("kind", KINDS)
def test_zero_exploration_constant_prefers_unvisited_acts_over_negative_values(kind):
    # c = 0, Q_0 = 0: acts 3 and 5 have negative values, 8 and 9 are still at 0 -> 8, the first of the tie
    visits = [(3, -0.2), (5, -0.4)]
    assert chosen(kind, [3, 5, 8, 9], [0.1, 0.1, 0.1, 0.7], visits, cpuct=0.0, q0=0.0) == 8


@pytest.mark.parametrize("kind", KINDS)
def test_the_act_count_divides_the_bonus(kind):
    # equal priors and equal values: the act followed least gets the largest bonus
    visits = [(0, 0.1)] * 4 + [(1, 0.1)] * 1 + [(2, 0.1)] * 3
    assert chosen(kind, [0, 1, 2], [1.0, 1.0, 1.0], visits) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_one_plus_the_act_count_divides_the_bonus(kind):
    # priors 0.5, 0.5; act 0 followed once (value 0.15), act 1 never (Q_0 = 0); Ns = 1
    # 0.15 + 0.5/(1 + 1) = 0.40 against 0 + 0.5/(1 + 0) = 0.50 -> act 1 (with 2 + N: 0.317 against 0.25)
    assert chosen(kind, [0, 1], [0.5, 0.5], [(0, 0.15)]) == 1
    # priors 0.8, 0.2; act 0 followed 3 times (value 0), act 1 once (value 0.18); Ns = 4
    # 0.8*2/(1 + 3) = 0.40 against 0.18 + 0.2*2/(1 + 1) = 0.38 -> act 0 (with N alone: 0.533 against 0.58)
    assert chosen(kind, [0, 1], [0.8, 0.2], [(0, 0.0)] * 3 + [(1, 0.18)]) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_the_square_root_of_the_node_count_scales_the_bonus(kind):
    # priors 0.5, 0.5; act 0 followed 8 times (value 0), act 1 once (value -0.6); Ns = 9
    # 0.5*3/9 = 0.167 against -0.6 + 0.5*3/2 = 0.150 -> act 0
    # (with sqrt(Ns + 1): 0.176 against 0.191; with Ns itself: 0.5 against 1.65)
    assert chosen(kind, [0, 1], [0.5, 0.5], [(0, 0.0)] * 8 + [(1, -0.6)]) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_fresh_node_follows_the_highest_prior(kind):
    # just expanded (Ns = 0, every value Q_0): the prior decides, whatever the order of the acts
    assert chosen(kind, [0, 4, 7, 9], [0.1, 0.2, 0.6, 0.1]) == 7
    assert chosen(kind, [2, 3, 10], [0.3, 0.5, 0.2], q0=0.25) == 3


@pytest.mark.parametrize("kind", KINDS)
def test_fresh_node_with_equal_highest_priors_takes_the_first(kind):
    # priors as GDP-Zero's planner makes them (smoothed counts): 2/9, 3/9, 3/9, 1/9
    assert chosen(kind, [1, 6, 8, 12], [2.0, 3.0, 3.0, 1.0]) == 6


@pytest.mark.parametrize("kind", KINDS)
def test_fresh_node_with_zero_constant_takes_the_first_act(kind):
    # c = 0 at a fresh node: every score is Q_0
    assert chosen(kind, [2, 4, 9], [0.1, 0.2, 0.7], cpuct=0.0, q0=0.3) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_second_visit_weighs_the_first_value_against_the_prior(kind):
    # after one visit of the top-prior act (Ns = 1): act 0 (prior 0.6) scores v + 0.6 / 2,
    # act 1 (prior 0.3) scores 0 + 0.3, act 2 (prior 0.1) 0.1
    assert chosen(kind, [0, 1, 2], [0.6, 0.3, 0.1], [(0, -0.1)]) == 1  # 0.2 against 0.3
    assert chosen(kind, [0, 1, 2], [0.6, 0.3, 0.1], [(0, 0.1)]) == 0  # 0.4 against 0.3


@pytest.mark.parametrize("kind", KINDS)
def test_ties_go_to_the_first_valid_act(kind):
    # equal priors, counts and values at acts 1, 4 and 6: the first of them wins
    visits = [(1, 0.3), (4, 0.3), (6, 0.3), (1, 0.3), (4, 0.3), (6, 0.3)]
    assert chosen(kind, [1, 4, 6], [1.0, 1.0, 1.0], visits) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_ties_after_the_first_act_go_to_the_earlier_one(kind):
    # act 1 is behind; acts 4 and 6 tie exactly: 4 wins
    visits = [(1, -0.3), (4, 0.3), (6, 0.3)]
    assert chosen(kind, [1, 4, 6], [1.0, 1.0, 1.0], visits) == 4


@pytest.mark.parametrize("kind", KINDS)
def test_single_valid_act(kind):
    # as at GDP-Zero's root, where only the greeting is allowed
    assert chosen(kind, [11], [1.0], [(11, -0.9)] * 4) == 11
    assert chosen(kind, [11], [1.0], cpuct=2.0, q0=-1.0) == 11


@probe
def at_a_node_without_valid_acts(kind):
    """In the candidate: a node whose planner allowed no act; how many valid acts it has, and the choice."""
    from toy_dialogue import make_planner

    mcts = make_planner(kind, 1.0, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        key = expand(mcts, [], [])  # `_init_node` warns: the planner allowed nothing
    return {"valid": len(mcts.valid_moves[key]), "choice": mcts.find_best_action(key)}


@pytest.mark.parametrize("kind", KINDS)
def test_no_valid_act_gives_minus_one(kind):
    got = at_a_node_without_valid_acts(kind)
    assert got["valid"] == 0
    assert got["choice"] == -1


@pytest.mark.parametrize("kind", KINDS)
def test_only_valid_acts_are_candidates(kind):
    # every valid act has a negative value; the invalid acts have no statistics at all
    visits = [(2, -0.5), (5, -0.4), (2, -0.5), (5, -0.4)]
    choice = chosen(kind, [2, 5], [0.5, 0.5], visits, cpuct=0.1)
    assert choice in (2, 5)
    assert choice == 5


@probe
def chosen_at_two_nodes(kind):
    """In the candidate: one planner, two nodes with mirrored values; the choice at each."""
    from toy_dialogue import make_planner

    mcts = make_planner(kind, 1.0, 0.0)
    a = expand(mcts, [0, 1], [0.5, 0.5], dialogue("greeting"))
    b = expand(mcts, [0, 1], [0.5, 0.5], dialogue("greeting", "logical appeal"))
    for act, value in [(0, 0.9), (1, 0.0)] * 3:
        backup(mcts, a, act, value)
        backup(mcts, b, act, 0.9 - value)
    return [mcts.find_best_action(a), mcts.find_best_action(b)]


@pytest.mark.parametrize("kind", KINDS)
def test_reads_the_statistics_of_the_given_node(kind):
    at_a, at_b = chosen_at_two_nodes(kind)
    assert at_a == 0
    assert at_b == 1


@probe
def statistics_around_two_selections(kind, valid, weights, visits, cpuct):
    """In the candidate: the node's statistics before and after two calls of find_best_action."""
    mcts, key = node(kind, valid, weights, visits, cpuct=cpuct)

    def snapshot():
        return {"Q": dict(mcts.Q[key]), "Nsa": dict(mcts.Nsa[key]), "Ns": mcts.Ns[key], "P": mcts.P[key].copy(), "valid": list(mcts.valid_moves[key])}

    before = snapshot()
    mcts.find_best_action(key)
    mcts.find_best_action(key)
    return {"before": before, "after": snapshot()}


@pytest.mark.parametrize("kind", KINDS)
def test_statistics_are_left_unchanged(kind):
    # the candidate's own report of the statistics; the choices checked elsewhere are the anchor
    visits = [(0, 0.1), (3, 0.3), (0, -0.2), (3, 0.5), (3, 0.1)]
    got = statistics_around_two_selections(kind, [0, 2, 3], [0.5, 0.3, 0.2], visits, 1.3)
    before, after = got["before"], got["after"]
    assert after["Q"] == before["Q"] and after["Nsa"] == before["Nsa"] and after["Ns"] == before["Ns"]
    assert np.array_equal(after["P"], before["P"]) and after["valid"] == before["valid"]


# ---------------------------------------------------------------------------------------------
# nodes grown as a search grows them


def _decided(stats, scores):
    """Whether the rule decides the choice regardless of rounding (see generators/search_runs.py)."""
    best = max(scores.values())
    near = [a for a in scores if scores[a] >= best - 1e-9 * max(1.0, abs(best))]
    same = lambda a, b: stats.Q[a] == stats.Q[b] and (  # noqa: E731
        stats.cpuct == 0 or (stats.P[a] == stats.P[b] and stats.Nsa[a] == stats.Nsa[b]))
    return all(same(near[0], a) for a in near[1:])


@probe
def choices_while_nodes_grow(cases):
    """In the candidate: for each [kind, valid, weights, cpuct, q0, backups], a node expanded
    with those, then for each (act, value) of `backups` the act find_best_action chooses, followed
    by that backup. Returns the choices, one list per case."""
    out = []
    for kind, valid, weights, cpuct, q0, backups in cases:
        mcts, key = node(kind, valid, weights, cpuct=cpuct, q0=q0)
        seen = []
        for act, value in backups:
            seen.append(mcts.find_best_action(key))
            backup(mcts, key, act, value)
        out.append(seen)
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_agrees_with_the_rule_while_a_node_grows(kind):
    # 120 nodes: expanded with random valid acts and priors (some of them smoothed counts, as
    # GDP-Zero's planner makes them), then 30 selections, each followed by the backup of a value
    # drawn around a mean of the chosen act
    # (the node grows the same way here, in OracleNode, which decides every expected choice;
    # the candidate's node gets the same backups, and its choices come back in one probe call)
    rng = random.Random(20261201)
    cases, wants = [], []
    for case in range(120):
        valid = sorted(rng.sample(range(NUM_ACTS), rng.randint(1, NUM_ACTS)))
        if case % 3 == 0:
            weights = [1 + rng.randint(0, 3) for _ in valid]
        else:
            weights = [rng.random() ** 2 + 1e-3 for _ in valid]
        means = {a: rng.uniform(-0.8, 0.8) for a in valid}
        cpuct = rng.choice([0.0, 0.1, 0.5, 1.0, 2.5, 10.0])
        q0 = rng.choice([0.0, 0.0, 0.25, -0.2])
        stats = OracleNode(valid, weights, cpuct, q0)
        backups, want_here = [], []
        for step in range(30):
            scores = puct_scores(stats)
            want = max(scores, key=lambda a: (scores[a], -list(scores).index(a)))
            want_here.append(want if stats.Ns == 0 or _decided(stats, scores) else None)
            value = round(max(-1.0, min(1.0, means[want] + rng.gauss(0, 0.3))), 2)
            stats.backup(want, value)
            backups.append([want, value])
        cases.append([kind, valid, weights, cpuct, q0, backups])
        wants.append(want_here)
    got = choices_while_nodes_grow(cases)
    assert len(got) == len(cases)
    checked = 0
    for case, (seen, want_here) in enumerate(zip(got, wants)):
        assert len(seen) == len(want_here), f"case {case}"
        for step, (choice, want) in enumerate(zip(seen, want_here)):
            if want is not None:
                assert choice == want, f"case {case}, step {step}"
                checked += 1
    assert checked > 3000


# ---------------------------------------------------------------------------------------------
# whole searches over the toy dialogue, against the recorded trees


def _load_runs():
    return json.loads((FIXTURES / "search_runs.json").read_text(encoding="utf-8"))["runs"]


def _run_id(run):
    return f"{run['kind']}-{run['prior']}-sims{run['num_simulations']}-c{run['cpuct']}-q{run['q0']}-s{run['seed']}"


@probe
def searched_tree(kind, num_simulations, cpuct, q0, seed, prior):
    """In the candidate: a whole seeded search over the toy dialogue, and the tree it leaves."""
    from toy_dialogue import run_search, tree_statistics

    return tree_statistics(run_search(kind, num_simulations, cpuct, q0, seed, prior=prior))


@pytest.mark.parametrize("run", _load_runs(), ids=_run_id)
def test_search_reproduces_the_recorded_tree(run):
    got = searched_tree(run["kind"], run["num_simulations"], run["cpuct"], run["q0"], run["seed"], run["prior"])
    want = run["tree"]
    # the root first, for a readable failure (both planners key the empty dialogue as "")
    assert got[""]["Ns"] == want[""]["Ns"]
    assert [a[:2] for a in got[""]["acts"]] == [a[:2] for a in want[""]["acts"]]
    assert sorted(got) == sorted(want)
    for key, recorded in want.items():
        assert got[key]["Ns"] == recorded["Ns"], key
        for (a, n, q), (wa, wn, wq) in zip(got[key]["acts"], recorded["acts"]):
            assert (a, n) == (wa, wn), key
            assert math.isclose(q, wq, rel_tol=1e-9, abs_tol=1e-12), key


def test_recorded_searches_cover_both_planners_priors_and_settings():
    runs = _load_runs()
    assert {r["kind"] for r in runs} == set(KINDS)
    assert {r["prior"] for r in runs} == {"hashed", "counting"}
    assert len({(r["cpuct"], r["q0"]) for r in runs}) >= 3
