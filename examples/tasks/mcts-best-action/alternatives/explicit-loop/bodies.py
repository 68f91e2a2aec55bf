# Alternative 'explicit-loop' for mcts-best-action: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: core/mcts.py::OpenLoopMCTS.find_best_action
        best_action = None
        best_score = -math.inf
        for action in actions:
            q = self.Q[key][action] if action in self.Q[key] else 0.0
            n = self.N[key][action] if action in self.N[key] else 0
            p = priors[action] if action in priors else 0.0
            u = self.c_puct * p * math.sqrt(self.Ns[key]) / (1 + n)
            score = q + u
            # Strictly greater: on a tie the act met first in `actions` is kept.
            if best_action is None or score > best_score:
                best_action, best_score = action, score
        return best_action
