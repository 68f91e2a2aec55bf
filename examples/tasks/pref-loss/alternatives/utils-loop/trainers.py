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
    n_pairs = check_same_length(
        policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps
    )
    losses: List[float] = []
    chosen_rewards: List[float] = []
    rejected_rewards: List[float] = []
    for i in range(n_pairs):
        # Equation (1): policy log-ratio margin minus the reference's.
        h = (policy_chosen_logps[i] - policy_rejected_logps[i]) - (
            reference_chosen_logps[i] - reference_rejected_logps[i]
        )
        if ipo:
            # Equation (4); label smoothing does not apply to IPO.
            loss = (h - 1.0 / (2.0 * beta)) ** 2
        else:
            # Equation (3) (equation (2) when label_smoothing == 0).
            loss = -(1.0 - label_smoothing) * log_sigmoid(beta * h) - label_smoothing * log_sigmoid(-beta * h)
        losses.append(float(loss))
        # Equation (5): implicit rewards.
        chosen_rewards.append(float(beta * (policy_chosen_logps[i] - reference_chosen_logps[i])))
        rejected_rewards.append(float(beta * (policy_rejected_logps[i] - reference_rejected_logps[i])))
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
