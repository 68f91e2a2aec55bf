"""Grader tests for the loss-derivative lines inside Trainer.train_step (mask mode "region")."""
import json
from pathlib import Path

import pytest
from lmr_bridge import probe, probe_helper

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


@probe_helper
def make_trainer(texts, overrides):
    """In the candidate: a trainer from a fixed, non-trivial starting point, so that the pairs' margins differ."""
    from models import BagOfWordsPolicy
    from trainers import Trainer, TrainerConfig

    reference = BagOfWordsPolicy.from_corpus(texts)
    start = {token: ((i * 37) % 11 - 5) / 10.0 for i, token in enumerate(reference.vocab)}
    policy = BagOfWordsPolicy(reference.vocab, start)
    settings = {"learning_rate": 1.0, "warmup_steps": 0, "total_steps": 1000, **overrides}
    return Trainer(policy, reference, TrainerConfig(**settings))


@probe
def gradient_and_step(texts, overrides, pairs, eps=1e-6):
    """In the candidate: central differences of the batch's mean loss (compute_metrics is not
    masked), then one train_step: the expected and the actual change of every weight."""
    trainer = make_trainer(texts, overrides)
    grad = {}
    for token in trainer.policy.vocab:
        original = trainer.policy.weights[token]
        trainer.policy.weights[token] = original + eps
        up = trainer.compute_metrics(pairs)["loss"]
        trainer.policy.weights[token] = original - eps
        down = trainer.compute_metrics(pairs)["loss"]
        trainer.policy.weights[token] = original
        grad[token] = (up - down) / (2 * eps)
    before = dict(trainer.policy.weights)
    lr = trainer.learning_rate
    trainer.train_step(pairs)
    return {"grad": grad, "lr": lr, "step": {t: trainer.policy.weights[t] - before[t] for t in before}}


@probe
def losses_of_small_steps(texts, overrides, pairs, steps):
    trainer = make_trainer(texts, overrides)
    losses = [trainer.train_step(pairs)["loss"] for _ in range(steps)]
    losses.append(trainer.compute_metrics(pairs)["loss"])
    return losses


@probe
def shift_at_zero_margin(texts, overrides, pairs):
    trainer = make_trainer(texts, overrides)
    trainer.reference = trainer.policy.copy()  # every margin is 0
    before = dict(trainer.policy.weights)
    trainer.train_step(pairs)
    return max(abs(trainer.policy.weights[t] - w) for t, w in before.items())


@probe
def recorded_run(texts, config, batches, n_steps):
    trainer = make_trainer(texts, config)
    losses = [trainer.train_step(batches[i % len(batches)])["loss"] for i in range(n_steps)]
    return {"losses": losses, "weights": dict(trainer.policy.weights)}


# The gradient below is the workspace's own loss differentiated numerically, in the candidate;
# the recorded runs are the anchor that does not depend on anything the candidate computes.
@pytest.mark.parametrize("name", list(VARIANTS))
def test_update_is_minus_lr_times_the_loss_gradient(name):
    got = gradient_and_step(TEXTS, VARIANTS[name], PAIRS)
    assert any(abs(g) > 1e-3 for g in got["grad"].values()), "the check needs a non-zero gradient"
    for token, g in got["grad"].items():
        assert pytest.approx(-got["lr"] * g, abs=1e-6) == got["step"][token], token


@pytest.mark.parametrize("name", ["dpo", "cdpo", "ipo"])
def test_small_steps_lower_the_loss(name):
    losses = losses_of_small_steps(TEXTS, {**VARIANTS[name], "learning_rate": 0.05}, PAIRS, 5)
    assert all(a > b for a, b in zip(losses, losses[1:])), losses


@pytest.mark.parametrize("smoothing, moves", [(0.5, False), (0.2, True)])
def test_zero_margin_gradient_vanishes_only_for_smoothing_one_half(smoothing, moves):
    shift = shift_at_zero_margin(TEXTS, {"beta": 0.8, "label_smoothing": smoothing}, PAIRS)
    if moves:
        assert shift > 1e-3
    else:
        assert pytest.approx(0.0, abs=1e-12) == shift


@pytest.mark.parametrize("run", RECORDED["runs"], ids=RUN_IDS)
def test_training_losses_match_recorded_run(run):
    got = recorded_run(TEXTS, run["config"], BATCHES, len(run["losses"]))
    assert pytest.approx(run["losses"], abs=1e-9) == got["losses"]


@pytest.mark.parametrize("run", RECORDED["runs"], ids=RUN_IDS)
def test_final_weights_match_recorded_run(run):
    got = recorded_run(TEXTS, run["config"], BATCHES, len(run["losses"]))
    for token, weight in run["final_weights"].items():
        assert pytest.approx(weight, abs=1e-9) == got["weights"][token], token
