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
        self.policy = policy
        self.reference = reference
        self.config = config
        self.step = 0
        self.history: List[Dict[str, float]] = []

    @property
    def learning_rate(self) -> float:
        cfg = self.config
        return warmup_linear(self.step, cfg.warmup_steps, cfg.total_steps, cfg.learning_rate)

    @staticmethod
    def batch_logps(model: BagOfWordsPolicy, batch: Sequence[dict]) -> Tuple[List[float], List[float]]:
        chosen = [model.sequence_logp(example["chosen"]) for example in batch]
        rejected = [model.sequence_logp(example["rejected"]) for example in batch]
        return chosen, rejected

    def compute_metrics(self, batch: Sequence[dict]) -> Dict[str, float]:
        policy_chosen, policy_rejected = self.batch_logps(self.policy, batch)
        ref_chosen, ref_rejected = self.batch_logps(self.reference, batch)
        losses, chosen_rewards, rejected_rewards = preference_loss(
            policy_chosen, policy_rejected, ref_chosen, ref_rejected,
            self.config.beta, self.config.label_smoothing, self.config.ipo,
        )
        margins = [c - r for c, r in zip(chosen_rewards, rejected_rewards)]
        return {
            "loss": mean(losses),
            "reward_margin": mean(margins),
            "reward_accuracy": mean(1.0 if m > 0 else 0.0 for m in margins),
        }

    def train_step(self, batch: Sequence[dict]) -> Dict[str, float]:
        """One gradient step on the policy weights; returns the metrics measured before it."""
        metrics = self.compute_metrics(batch)
        cfg = self.config
        policy_chosen, policy_rejected = self.batch_logps(self.policy, batch)
        ref_chosen, ref_rejected = self.batch_logps(self.reference, batch)
        grad = {tok: 0.0 for tok in self.policy.vocab}
        for i, example in enumerate(batch):
            logits = (policy_chosen[i] - policy_rejected[i]) - (ref_chosen[i] - ref_rejected[i])
            # d loss / d logits: IPO (equation (4)) or label-smoothed logistic (equation (3)).
            if cfg.ipo:
                dloss_dlogits = 2.0 * (logits - 1.0 / (2.0 * cfg.beta))
            else:
                eps = cfg.label_smoothing
                dloss_dlogits = (
                    -(1.0 - eps) * cfg.beta * sigmoid(-cfg.beta * logits)
                    + eps * cfg.beta * sigmoid(cfg.beta * logits)
                )
            grad_chosen = self.policy.logp_gradient(example["chosen"])
            grad_rejected = self.policy.logp_gradient(example["rejected"])
            for tok in grad:
                grad[tok] += dloss_dlogits * (grad_chosen[tok] - grad_rejected[tok]) / len(batch)
        self.policy.apply_update(grad, self.learning_rate)
        self.step += 1
        self.history.append(metrics)
        return metrics

    async def evaluate(self, batches: Sequence[Sequence[dict]]) -> Dict[str, float]:
        """Mean metrics over `batches`; yields between batches so callers can log concurrently."""
        rows = []
        for batch in batches:
            rows.append(self.compute_metrics(batch))
            await asyncio.sleep(0)
        return average_metrics(rows)
