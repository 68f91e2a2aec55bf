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
    import math

    columns = [
        list(policy_chosen_logps),
        list(policy_rejected_logps),
        list(reference_chosen_logps),
        list(reference_rejected_logps),
    ]
    if len({len(column) for column in columns}) != 1:
        raise ValueError(f"all four inputs must have the same length, got {[len(c) for c in columns]}")
    if not beta > 0:
        raise ValueError(f"beta must be positive, got {beta}")

    def softplus(z: float) -> float:
        # log(1 + exp(z)) without overflow: max(z, 0) + log1p(exp(-|z|)).
        return max(z, 0.0) + math.log1p(math.exp(-abs(z)))

    pc, pr, rc, rr = columns
    margins = [(a - b) - (c - d) for a, b, c, d in zip(pc, pr, rc, rr)]
    if ipo:
        target = 1.0 / (2.0 * beta)
        losses = [(h - target) * (h - target) for h in margins]
    else:
        eps = float(label_smoothing)
        # -log sigmoid(x) = softplus(-x) and -log sigmoid(-x) = softplus(x).
        losses = [(1.0 - eps) * softplus(-beta * h) + eps * softplus(beta * h) for h in margins]
    chosen_rewards = [beta * (a - c) for a, c in zip(pc, rc)]
    rejected_rewards = [beta * (b - d) for b, d in zip(pr, rr)]
    return [float(x) for x in losses], [float(x) for x in chosen_rewards], [float(x) for x in rejected_rewards]


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
        # TODO: implement Trainer.__init__
        raise NotImplementedError

    @property
    def learning_rate(self) -> float:
        # TODO: implement Trainer.learning_rate
        raise NotImplementedError

    @staticmethod
    def batch_logps(model: BagOfWordsPolicy, batch: Sequence[dict]) -> Tuple[List[float], List[float]]:
        # TODO: implement Trainer.batch_logps
        raise NotImplementedError

    def compute_metrics(self, batch: Sequence[dict]) -> Dict[str, float]:
        # TODO: implement Trainer.compute_metrics
        raise NotImplementedError

    def train_step(self, batch: Sequence[dict]) -> Dict[str, float]:
        """One gradient step on the policy weights; returns the metrics measured before it."""
        # TODO: implement Trainer.train_step
        raise NotImplementedError

    async def evaluate(self, batches: Sequence[Sequence[dict]]) -> Dict[str, float]:
        """Mean metrics over `batches`; yields between batches so callers can log concurrently."""
        # TODO: implement Trainer.evaluate
        raise NotImplementedError
