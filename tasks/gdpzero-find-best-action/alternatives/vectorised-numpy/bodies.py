# Alternative 'vectorised-numpy' for gdpzero-find-best-action: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: core/mcts.py::MCTS.find_best_action
		# PUCT (Eq. 1), vectorised over the valid acts:
		# U(s,a) = Q(s,a) + c_p * p(a|s) * sqrt(sum_b N(s,b)) / (1 + N(s,a))
		acts = np.asarray(self.valid_moves[hashable_state])
		if acts.size == 0:
			return -1
		q = np.array([self.Q[hashable_state][a] for a in acts], dtype=np.float64)
		n_sa = np.array([self.Nsa[hashable_state][a] for a in acts], dtype=np.float64)
		prior = np.asarray(self.P[hashable_state], dtype=np.float64)[acts]
		n_total = float(n_sa.sum())  # equals self.Ns[hashable_state]
		if n_total == 0:
			# fresh node: a tiny positive count lets the prior decide
			n_total = 1e-8
		u = q + self.configs.cpuct * prior * np.sqrt(n_total) / (1.0 + n_sa)
		# np.argmax returns the first maximum, i.e. the smallest act id among ties
		return acts[int(np.argmax(u))]

# lmr-body: core/mcts.py::OpenLoopMCTS.find_best_action
		# PUCT (Eq. 1), vectorised over the valid acts:
		# U(s,a) = Q(s,a) + c_p * p(a|s) * sqrt(sum_b N(s,b)) / (1 + N(s,a))
		acts = np.asarray(self.valid_moves[hashable_state])
		if acts.size == 0:
			return -1
		q = np.array([self.Q[hashable_state][a] for a in acts], dtype=np.float64)
		n_sa = np.array([self.Nsa[hashable_state][a] for a in acts], dtype=np.float64)
		prior = np.asarray(self.P[hashable_state], dtype=np.float64)[acts]
		n_total = float(n_sa.sum())  # equals self.Ns[hashable_state]
		if n_total == 0:
			# fresh node: a tiny positive count lets the prior decide
			n_total = 1e-8
		u = q + self.configs.cpuct * prior * np.sqrt(n_total) / (1.0 + n_sa)
		# np.argmax returns the first maximum, i.e. the smallest act id among ties
		return acts[int(np.argmax(u))]
