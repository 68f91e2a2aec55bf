# Alternative 'softplus-first-principles' for simpo-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: scripts/simpo_trainer.py::SimPOTrainer.simpo_loss
        if self.loss_type not in ("sigmoid", "hinge"):
            raise ValueError(f"Unknown loss type: {self.loss_type!r}; expected 'sigmoid' or 'hinge'.")

        device = self.accelerator.device
        beta = float(self.beta)
        gamma = float(self.gamma_beta_ratio) * beta  # target reward margin of Eqs. 5-6

        # length-normalised rewards of Eq. 4: r(x, y) = beta / |y| * log pi(y | x)
        reward_chosen = beta * policy_chosen_logps.to(device)
        reward_rejected = beta * policy_rejected_logps.to(device)

        # Bradley-Terry argument with target margin (Eq. 5): z = r_w - r_l - gamma
        z = reward_chosen - reward_rejected - gamma

        def neg_log_sigmoid(t):
            # -log sigmoid(t) = log(1 + exp(-t)), evaluated piecewise so that exp never overflows:
            #   t >= 0: log1p(exp(-t));   t < 0: -t + log1p(exp(t)).
            # Each branch only sees inputs of its own sign (the other entries are replaced by 0),
            # so neither produces inf/nan and the gradient is exact everywhere (also at t = 0).
            nonneg = t >= 0
            zeros = torch.zeros_like(t)
            t_pos = torch.where(nonneg, t, zeros)
            t_neg = torch.where(nonneg, zeros, t)
            branch_pos = torch.log1p(torch.exp(-t_pos))
            branch_neg = torch.log1p(torch.exp(t_neg)) - t_neg
            return torch.where(nonneg, branch_pos, branch_neg)

        if self.loss_type == "sigmoid":
            eps = float(self.label_smoothing)
            losses = (1.0 - eps) * neg_log_sigmoid(z)
            if eps != 0.0:
                losses = losses + eps * neg_log_sigmoid(-z)
        else:  # hinge
            # max(0, 1 - z); subgradient 0 at the kink z = 1 (as torch.relu)
            margin_violation = 1.0 - z
            losses = torch.where(margin_violation > 0, margin_violation, torch.zeros_like(margin_violation))

        chosen_rewards = reward_chosen.detach()
        rejected_rewards = reward_rejected.detach()

        return losses, chosen_rewards, rejected_rewards
