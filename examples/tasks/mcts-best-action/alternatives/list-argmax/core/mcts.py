"""Open-loop MCTS for dialogue policy planning.

Nodes are keyed by the sequence of system acts from the root rather than by the dialogue state
itself, so that statistics are shared when the simulated user answers differently to the same
acts, as in open-loop planning for dialogue. The game here is deterministic, which keeps tests exact.
"""
import math
from typing import Dict, Hashable, List

from core.game import DialogueState, PersuasionGame


class OpenLoopMCTS:
    def __init__(self, game: PersuasionGame, c_puct: float = 1.0, num_simulations: int = 50):
        if num_simulations < 1:
            raise ValueError("num_simulations must be at least 1")
        self.game = game
        self.c_puct = c_puct
        self.num_simulations = num_simulations
        self.P: Dict[Hashable, Dict[str, float]] = {}
        self.Q: Dict[Hashable, Dict[str, float]] = {}
        self.N: Dict[Hashable, Dict[str, int]] = {}
        self.Ns: Dict[Hashable, int] = {}

    @staticmethod
    def node_key(state: DialogueState) -> Hashable:
        return state.history

    def expand(self, state: DialogueState) -> float:
        key = self.node_key(state)
        priors = self.game.prior(state)
        self.P[key] = priors
        self.Q[key] = {action: 0.0 for action in priors}
        self.N[key] = {action: 0 for action in priors}
        self.Ns[key] = 0
        return self.game.value(state)

    def search(self, state: DialogueState) -> float:
        """One simulation from `state`: select down the tree, expand a leaf, back the value up."""
        if self.game.is_terminal(state):
            return self.game.reward(state)
        key = self.node_key(state)
        if key not in self.P:
            return self.expand(state)
        actions = self.game.legal_actions(state)
        priors = self.P[key]

        best_action = self.find_best_action(key, actions, priors)

        value = self.search(state.after(best_action))
        visits = self.N[key][best_action]
        self.Q[key][best_action] = (visits * self.Q[key][best_action] + value) / (visits + 1)
        self.N[key][best_action] = visits + 1
        self.Ns[key] += 1
        return value

    def find_best_action(self, key, actions, priors):
        # PUCT, equation (1): Q(s,a) + c_puct * P(s,a) * sqrt(N(s)) / (1 + N(s,a)).
        q_values, visits = self.Q[key], self.N[key]
        sqrt_total = math.sqrt(self.Ns[key])
        scores = [
            q_values.get(action, 0.0)
            + self.c_puct * priors.get(action, 0.0) * sqrt_total / (1 + visits.get(action, 0))
            for action in actions
        ]
        # list.index finds the first maximum, i.e. the earliest act in `actions` on a tie.
        return actions[scores.index(max(scores))]

    def plan(self, state: DialogueState) -> Dict[str, float]:
        """Run the simulations and return the visit distribution over the root's actions."""
        for _ in range(self.num_simulations):
            self.search(state)
        counts = self.N.get(self.node_key(state), {})
        total = sum(counts.values())
        if total == 0:
            return {action: 1.0 / len(counts) for action in counts} if counts else {}
        return {action: n / total for action, n in counts.items()}

    def choose_action(self, state: DialogueState) -> str:
        distribution = self.plan(state)
        if not distribution:
            raise ValueError("no legal action in a terminal state")
        return max(distribution, key=lambda action: (distribution[action], -list(distribution).index(action)))

    def principal_variation(self, state: DialogueState) -> List[str]:
        """Most visited act at each depth, following the tree as far as it was expanded."""
        line: List[str] = []
        while not self.game.is_terminal(state) and self.node_key(state) in self.N:
            counts = self.N[self.node_key(state)]
            if not any(counts.values()):
                break
            action = max(counts, key=counts.get)
            line.append(action)
            state = state.after(action)
        return line
