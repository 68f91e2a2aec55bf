# Alternative 'explicit-loop' for gdpzero-find-best-action: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: core/mcts.py::MCTS.find_best_action
		# PUCT (Eq. 1): U(s,a) = Q(s,a) + c_p * p(a|s) * sqrt(N(s)) / (1 + N(s,a))
		Ns = self.Ns[hashable_state]
		if Ns == 0:
			# fresh node: a tiny positive count lets the prior decide
			Ns = 1e-8
		sqrt_Ns = math.sqrt(Ns)
		best_uct = -float('inf')
		best_action = -1
		for a in self.valid_moves[hashable_state]:
			uct = self.Q[hashable_state][a] + self.configs.cpuct * self.P[hashable_state][a] * sqrt_Ns / (1 + self.Nsa[hashable_state][a])
			# strictly greater: the first (smallest) of equally good acts wins
			if uct > best_uct:
				best_uct = uct
				best_action = a
		return best_action

# lmr-body: core/mcts.py::OpenLoopMCTS.find_best_action
		# PUCT (Eq. 1): U(s,a) = Q(s,a) + c_p * p(a|s) * sqrt(N(s)) / (1 + N(s,a))
		Ns = self.Ns[hashable_state]
		if Ns == 0:
			# fresh node: a tiny positive count lets the prior decide
			Ns = 1e-8
		sqrt_Ns = math.sqrt(Ns)
		best_uct = -float('inf')
		best_action = -1
		for a in self.valid_moves[hashable_state]:
			uct = self.Q[hashable_state][a] + self.configs.cpuct * self.P[hashable_state][a] * sqrt_Ns / (1 + self.Nsa[hashable_state][a])
			# strictly greater: the first (smallest) of equally good acts wins
			if uct > best_uct:
				best_uct = uct
				best_action = a
		return best_action
