"""Direct preference optimisation (DPO / IPO) for the unigram policy in models.py.

The loss follows section 4 of the paper: the policy is pushed to raise the log-ratio of the
chosen response over the rejected one, measured relative to a frozen reference policy.
"""
import asyncio
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

from models import BagOfWordsPolicy
from utils import average_metrics, check_same_length, log_sigmoid, mean, sigmoid, warmup_linear


def preference_loss(
    policy_chosen_logps: Sequence[float],
    policy_rejected_logps: Sequence[float],
    reference_chosen_logps: Sequence[float],
    reference_rejected_logps: Sequence[float],
    beta: float,
    label_smoothing: float = 0.0,
    ipo: bool = False,
) -> Tuple[List[float], List[float], List[float]]:
    """Per-pair DPO loss and implicit rewards for a batch of preference pairs.

    Args:
        policy_chosen_logps: log-probabilities of the chosen responses under the policy.
        policy_rejected_logps: log-probabilities of the rejected responses under the policy.
        reference_chosen_logps: the same for the chosen responses under the reference model.
        reference_rejected_logps: the same for the rejected responses under the reference model.
        beta: temperature of the implicit reward; larger means staying closer to the reference.
        label_smoothing: assumed probability that a preference label is flipped (conservative DPO).
        ipo: use the IPO squared loss instead of the logistic one.

    Returns:
        (losses, chosen_rewards, rejected_rewards): three lists with one float per pair.
    """
    if beta <= 0:
        raise ValueError(f"beta must be positive, got {beta}")
    n = check_same_length(
        policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps
    )
    losses: List[float] = []
    chosen_rewards: List[float] = []
    rejected_rewards: List[float] = []
    for i in range(n):
        policy_margin = policy_chosen_logps[i] - policy_rejected_logps[i]
        reference_margin = reference_chosen_logps[i] - reference_rejected_logps[i]
        logits = policy_margin - reference_margin
        if ipo:
            # IPO regresses the margin onto 1/(2 beta) instead of pushing it without bound.
            loss = (logits - 1.0 / (2.0 * beta)) ** 2
        else:
            loss = -(1.0 - label_smoothing) * log_sigmoid(beta * logits)
            loss -= label_smoothing * log_sigmoid(-beta * logits)
        losses.append(loss)
        chosen_rewards.append(beta * (policy_chosen_logps[i] - reference_chosen_logps[i]))
        rejected_rewards.append(beta * (policy_rejected_logps[i] - reference_rejected_logps[i]))
    return losses, chosen_rewards, rejected_rewards


@dataclass
class TrainerConfig:
    beta: float = 0.1
    label_smoothing: float = 0.0
    ipo: bool = False
    learning_rate: float = 0.5
    warmup_steps: int = 2
    total_steps: int = 20


class Trainer:
    """Trains `policy` on preference pairs against a frozen copy of `reference`."""

    def __init__(self, policy: BagOfWordsPolicy, reference: BagOfWordsPolicy, config: TrainerConfig):
        self.policy, self.reference, self.config = policy, reference, config
        self.step: int = 0
        self.history: List[Dict[str, float]] = list()

    @property
    def learning_rate(self) -> float:
        return warmup_linear(
            step=self.step,
            warmup_steps=self.config.warmup_steps,
            total_steps=self.config.total_steps,
            peak=self.config.learning_rate,
        )

    @staticmethod
    def batch_logps(model: BagOfWordsPolicy, batch: Sequence[dict]) -> Tuple[List[float], List[float]]:
        chosen: List[float] = []
        rejected: List[float] = []
        for example in batch:
            chosen.append(model.sequence_logp(example["chosen"]))
            rejected.append(model.sequence_logp(example["rejected"]))
        return chosen, rejected

    def compute_metrics(self, batch: Sequence[dict]) -> Dict[str, float]:
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

    def train_step(self, batch: Sequence[dict]) -> Dict[str, float]:
        """One gradient step on the policy weights; returns the metrics measured before it."""
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

    async def evaluate(self, batches: Sequence[Sequence[dict]]) -> Dict[str, float]:
        """Mean metrics over `batches`; yields between batches so callers can log concurrently."""
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
