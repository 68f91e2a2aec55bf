# Alternative 'weights-then-chain' for trainer-class: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: trainers.py::Trainer.__init__
        self.policy, self.reference, self.config = policy, reference, config
        self.step: int = 0
        self.history: List[Dict[str, float]] = list()

# lmr-body: trainers.py::Trainer.learning_rate
        return warmup_linear(
            step=self.step,
            warmup_steps=self.config.warmup_steps,
            total_steps=self.config.total_steps,
            peak=self.config.learning_rate,
        )

# lmr-body: trainers.py::Trainer.batch_logps
        chosen: List[float] = []
        rejected: List[float] = []
        for example in batch:
            chosen.append(model.sequence_logp(example["chosen"]))
            rejected.append(model.sequence_logp(example["rejected"]))
        return chosen, rejected

# lmr-body: trainers.py::Trainer.compute_metrics
        logps = self.batch_logps(self.policy, batch) + self.batch_logps(self.reference, batch)
        losses, chosen_rewards, rejected_rewards = preference_loss(
            *logps, self.config.beta, self.config.label_smoothing, self.config.ipo
        )
        count = len(losses)
        if count == 0:
            raise ValueError("compute_metrics() of an empty batch")
        total_loss = 0.0
        total_margin = 0.0
        correct = 0
        for loss, chosen, rejected in zip(losses, chosen_rewards, rejected_rewards):
            margin = chosen - rejected
            total_loss += loss
            total_margin += margin
            correct += margin > 0
        return {
            "loss": total_loss / count,
            "reward_margin": total_margin / count,
            "reward_accuracy": correct / count,
        }

# lmr-body: trainers.py::Trainer.train_step
        metrics = self.compute_metrics(batch)
        cfg = self.config
        policy_chosen, policy_rejected = self.batch_logps(self.policy, batch)
        reference_chosen, reference_rejected = self.batch_logps(self.reference, batch)
        # First the per-pair weights d loss_i / d h_i, divided by the batch size (mean loss).
        weights = []
        for pc, pr, rc, rr in zip(policy_chosen, policy_rejected, reference_chosen, reference_rejected):
            h = (pc - pr) - (rc - rr)
            if cfg.ipo:
                # d/dh (h - 1/(2 beta))^2
                slope = 2.0 * h - 1.0 / cfg.beta
            else:
                # d/dh [-(1-eps) log s(beta h) - eps log s(-beta h)] = beta (eps - s(-beta h))
                slope = cfg.beta * (cfg.label_smoothing - sigmoid(-cfg.beta * h))
            weights.append(slope / len(batch))
        # Then the chain rule: sum_i w_i (grad log pi(chosen_i) - grad log pi(rejected_i)).
        grad = dict.fromkeys(self.policy.weights, 0.0)
        for weight, example in zip(weights, batch):
            for text, sign in ((example["chosen"], 1.0), (example["rejected"], -1.0)):
                for tok, g in self.policy.logp_gradient(text).items():
                    grad[tok] += sign * weight * g
        lr = self.learning_rate
        self.policy.apply_update(grad, lr)
        self.step = self.step + 1
        self.history.append(metrics)
        return metrics

# lmr-body: trainers.py::Trainer.evaluate
        totals: Dict[str, float] = {}
        keys: List[str] = []
        count = 0
        for batch in batches:
            row = self.compute_metrics(batch)
            if not keys:
                keys = list(row)
                totals = {key: 0.0 for key in keys}
            for key in keys:
                totals[key] += row[key]
            count += 1
            await asyncio.sleep(0)
        return {key: totals[key] / count for key in keys} if count else {}
