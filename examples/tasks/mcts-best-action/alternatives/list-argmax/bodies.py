# Alternative 'list-argmax' for mcts-best-action: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: core/mcts.py::OpenLoopMCTS.find_best_action
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
