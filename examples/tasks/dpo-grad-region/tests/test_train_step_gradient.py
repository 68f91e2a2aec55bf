"""Grader tests for the loss-derivative lines inside Trainer.train_step (mask mode "region")."""
import json
from pathlib import Path

import pytest

from models import BagOfWordsPolicy
from trainers import Trainer, TrainerConfig

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDED = json.loads((FIXTURES / "training_runs.json").read_text(encoding="utf-8"))
BATCHES = RECORDED["batches"]
PAIRS = [pair for batch in BATCHES for pair in batch]
TEXTS = [p["chosen"] for p in PAIRS] + [p["rejected"] for p in PAIRS]
RUN_IDS = [r["name"] for r in RECORDED["runs"]]
VARIANTS = {
    "dpo": {"beta": 0.5},
    "dpo-small-beta": {"beta": 0.05},
    "cdpo": {"beta": 0.5, "label_smoothing": 0.25},
    "cdpo-heavy": {"beta": 1.5, "label_smoothing": 0.45},
    "ipo": {"beta": 0.5, "ipo": True},
    "ipo-large-beta": {"beta": 2.0, "ipo": True},
}


def start_weights(vocab):
    """A fixed, non-trivial starting point, so that the pairs' margins differ."""
    return {token: ((i * 37) % 11 - 5) / 10.0 for i, token in enumerate(vocab)}


def make_trainer(**overrides):
    reference = BagOfWordsPolicy.from_corpus(TEXTS)
    policy = BagOfWordsPolicy(reference.vocab, start_weights(reference.vocab))
    settings = {"learning_rate": 1.0, "warmup_steps": 0, "total_steps": 1000, **overrides}
    return Trainer(policy, reference, TrainerConfig(**settings))


def numeric_gradient(trainer, batch, eps=1e-6):
    """Central differences of the batch's mean loss (compute_metrics is not masked)."""
    grad = {}
    for token in trainer.policy.vocab:
        original = trainer.policy.weights[token]
        trainer.policy.weights[token] = original + eps
        up = trainer.compute_metrics(batch)["loss"]
        trainer.policy.weights[token] = original - eps
        down = trainer.compute_metrics(batch)["loss"]
        trainer.policy.weights[token] = original
        grad[token] = (up - down) / (2 * eps)
    return grad


@pytest.mark.parametrize("name", list(VARIANTS))
def test_update_is_minus_lr_times_the_loss_gradient(name):
    trainer = make_trainer(**VARIANTS[name])
    expected = numeric_gradient(trainer, PAIRS)
    assert any(abs(g) > 1e-3 for g in expected.values()), "the check needs a non-zero gradient"
    before = dict(trainer.policy.weights)
    lr = trainer.learning_rate
    trainer.train_step(PAIRS)
    for token, g in expected.items():
        step = trainer.policy.weights[token] - before[token]
        assert step == pytest.approx(-lr * g, abs=1e-6), token


@pytest.mark.parametrize("name", ["dpo", "cdpo", "ipo"])
def test_small_steps_lower_the_loss(name):
    trainer = make_trainer(**{**VARIANTS[name], "learning_rate": 0.05})
    losses = [trainer.train_step(PAIRS)["loss"] for _ in range(5)]
    losses.append(trainer.compute_metrics(PAIRS)["loss"])
    assert all(a > b for a, b in zip(losses, losses[1:])), losses


@pytest.mark.parametrize("smoothing, moves", [(0.5, False), (0.2, True)])
def test_zero_margin_gradient_vanishes_only_for_smoothing_one_half(smoothing, moves):
    trainer = make_trainer(beta=0.8, label_smoothing=smoothing)
    trainer.reference = trainer.policy.copy()  # every margin is 0
    before = dict(trainer.policy.weights)
    trainer.train_step(PAIRS)
    shift = max(abs(trainer.policy.weights[t] - w) for t, w in before.items())
    if moves:
        assert shift > 1e-3
    else:
        assert shift == pytest.approx(0.0, abs=1e-12)


def run_recorded(run):
    trainer = make_trainer(**run["config"])
    losses = [trainer.train_step(BATCHES[i % len(BATCHES)])["loss"] for i in range(len(run["losses"]))]
    return trainer, losses


@pytest.mark.parametrize("run", RECORDED["runs"], ids=RUN_IDS)
def test_training_losses_match_recorded_run(run):
    _, losses = run_recorded(run)
    assert losses == pytest.approx(run["losses"], abs=1e-9)


@pytest.mark.parametrize("run", RECORDED["runs"], ids=RUN_IDS)
def test_final_weights_match_recorded_run(run):
    trainer, _ = run_recorded(run)
    for token, weight in run["final_weights"].items():
        assert trainer.policy.weights[token] == pytest.approx(weight, abs=1e-9), token
