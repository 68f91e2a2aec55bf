# Alternative 'dict-loops' for trainer-class: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: trainers.py::Trainer.__init__
        self.policy = policy
        self.reference = reference
        self.config = config
        self.step = 0
        self.history: List[Dict[str, float]] = []

# lmr-body: trainers.py::Trainer.learning_rate
        cfg = self.config
        return warmup_linear(self.step, cfg.warmup_steps, cfg.total_steps, cfg.learning_rate)

# lmr-body: trainers.py::Trainer.batch_logps
        chosen = [model.sequence_logp(example["chosen"]) for example in batch]
        rejected = [model.sequence_logp(example["rejected"]) for example in batch]
        return chosen, rejected

# lmr-body: trainers.py::Trainer.compute_metrics
        cfg = self.config
        policy_chosen, policy_rejected = self.batch_logps(self.policy, batch)
        reference_chosen, reference_rejected = self.batch_logps(self.reference, batch)
        losses, chosen_rewards, rejected_rewards = preference_loss(
            policy_chosen, policy_rejected, reference_chosen, reference_rejected,
            cfg.beta, label_smoothing=cfg.label_smoothing, ipo=cfg.ipo,
        )
        margins = [c - r for c, r in zip(chosen_rewards, rejected_rewards)]
        return {
            "loss": mean(losses),
            "reward_margin": mean(margins),
            "reward_accuracy": mean(1.0 if m > 0 else 0.0 for m in margins),
        }

# lmr-body: trainers.py::Trainer.train_step
        metrics = self.compute_metrics(batch)
        cfg = self.config
        beta, eps = cfg.beta, cfg.label_smoothing
        policy_chosen, policy_rejected = self.batch_logps(self.policy, batch)
        reference_chosen, reference_rejected = self.batch_logps(self.reference, batch)
        n = len(batch)
        grad = {tok: 0.0 for tok in self.policy.vocab}
        for i, example in enumerate(batch):
            # Margin h of equation (1).
            h = (policy_chosen[i] - policy_rejected[i]) - (reference_chosen[i] - reference_rejected[i])
            # d loss / d h for equations (4) and (3) (equation (7) when eps == 0).
            if cfg.ipo:
                dloss_dh = 2.0 * (h - 1.0 / (2.0 * beta))
            else:
                dloss_dh = -(1.0 - eps) * beta * sigmoid(-beta * h) + eps * beta * sigmoid(beta * h)
            # Equation (6): d h / d w = d log pi(chosen) / d w - d log pi(rejected) / d w.
            grad_chosen = self.policy.logp_gradient(example["chosen"])
            grad_rejected = self.policy.logp_gradient(example["rejected"])
            for tok in grad:
                grad[tok] += dloss_dh * (grad_chosen[tok] - grad_rejected[tok]) / n
        self.policy.apply_update(grad, self.learning_rate)
        self.step += 1
        self.history.append(metrics)
        return metrics

# lmr-body: trainers.py::Trainer.evaluate
        rows = []
        for batch in batches:
            rows.append(self.compute_metrics(batch))
            await asyncio.sleep(0)
        return average_metrics(rows)
