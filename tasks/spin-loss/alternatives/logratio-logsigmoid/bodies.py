# Alternative 'logratio-logsigmoid' for spin-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: spin/alignment/trainer.py::SPINTrainer.spin_loss
        pi_logratios = policy_real_logps - policy_generated_logps
        if reference_free:
            ref_logratios = 0
        else:
            ref_logratios = opponent_real_logps - opponent_generated_logps

        logits = pi_logratios - ref_logratios

        if self.loss_type == "sigmoid":
            # logistic loss l(t) = log(1 + exp(-t)) = -log sigmoid(t), with t = beta * logits
            losses = -F.logsigmoid(self.beta * logits)
        elif self.loss_type == "hinge":
            losses = torch.relu(1 - self.beta * logits)
        else:
            raise ValueError(f"Unknown loss type: {self.loss_type}. Should be one of ['sigmoid', 'hinge']")

        real_rewards = self.beta * (policy_real_logps - opponent_real_logps).detach()
        generated_rewards = self.beta * (policy_generated_logps - opponent_generated_logps).detach()

        return losses, real_rewards, generated_rewards
