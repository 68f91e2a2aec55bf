# Alternative 'paper-grouping-piecewise' for spin-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: spin/alignment/trainer.py::SPINTrainer.spin_loss
        if self.loss_type not in ("sigmoid", "hinge"):
            raise ValueError(f"Unknown loss type: {self.loss_type}. Should be one of ['sigmoid', 'hinge']")

        beta = self.beta
        # Paper's grouping: t = lambda * log p_theta(y)/p_theta_t(y) - lambda * log p_theta(y')/p_theta_t(y').
        if reference_free:
            # opponent assigns the same probability to every response: its terms cancel
            real_term = beta * policy_real_logps
            generated_term = beta * policy_generated_logps
        else:
            real_term = beta * (policy_real_logps - opponent_real_logps)
            generated_term = beta * (policy_generated_logps - opponent_generated_logps)
        t = real_term - generated_term

        if self.loss_type == "sigmoid":
            # l(t) = log(1 + exp(-t)), evaluated piecewise so that exp never overflows
            t_pos = torch.clamp(t, min=0)
            t_neg = torch.clamp(t, max=0)
            loss_pos = torch.log1p(torch.exp(-t_pos))
            loss_neg = torch.log1p(torch.exp(t_neg)) - t_neg
            losses = torch.where(t >= 0, loss_pos, loss_neg)
        else:
            # l(t) = max(0, 1 - t)
            slack = 1 - t
            losses = slack * (slack > 0).to(slack.dtype)

        with torch.no_grad():
            real_rewards = beta * (policy_real_logps - opponent_real_logps)
            generated_rewards = beta * (policy_generated_logps - opponent_generated_logps)

        return losses, real_rewards.detach(), generated_rewards.detach()
