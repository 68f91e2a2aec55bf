# Alternative 'logsigmoid-library' for simpo-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: scripts/simpo_trainer.py::SimPOTrainer.simpo_loss
        device = self.accelerator.device
        policy_chosen_logps = policy_chosen_logps.to(device)
        policy_rejected_logps = policy_rejected_logps.to(device)

        # difference of the length-normalised log-likelihoods, shifted by the margin gamma / beta
        pi_logratios = policy_chosen_logps - policy_rejected_logps
        logits = pi_logratios - self.gamma_beta_ratio
        # argument of the sigmoid in Eq. 6: beta * (avg_logp_w - avg_logp_l) - gamma
        z = self.beta * logits

        if self.loss_type == "sigmoid":
            losses = (
                -F.logsigmoid(z) * (1 - self.label_smoothing)
                - F.logsigmoid(-z) * self.label_smoothing
            )
        elif self.loss_type == "hinge":
            losses = torch.relu(1 - z)
        else:
            raise ValueError(
                f"Unknown loss type: {self.loss_type}. Should be one of ['sigmoid', 'hinge']"
            )

        # rewards of Eq. 4 (beta times the average log-probability), for logging only
        chosen_rewards = self.beta * policy_chosen_logps.detach()
        rejected_rewards = self.beta * policy_rejected_logps.detach()

        return losses, chosen_rewards, rejected_rewards
