"""Grader tests for trainers.Trainer (every method of the class is masked)."""
import asyncio
import inspect
import json
import math
from pathlib import Path

import pytest

from models import BagOfWordsPolicy
from trainers import Trainer, TrainerConfig, preference_loss

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDED = json.loads((FIXTURES / "training_runs.json").read_text(encoding="utf-8"))
BATCHES = RECORDED["batches"]
PAIRS = [pair for batch in BATCHES for pair in batch]


def make_trainer(**overrides):
    texts = [p["chosen"] for p in PAIRS] + [p["rejected"] for p in PAIRS]
    policy = BagOfWordsPolicy.from_corpus(texts)
    config = TrainerConfig(**{"beta": 0.5, "learning_rate": 0.5, "warmup_steps": 0, "total_steps": 100, **overrides})
    return Trainer(policy, policy.copy(), config)


def test_constructor_keeps_its_arguments_and_starts_at_step_zero():
    policy = BagOfWordsPolicy(["a", "b"])
    reference = policy.copy()
    config = TrainerConfig()
    trainer = Trainer(policy, reference, config)
    assert trainer.policy is policy and trainer.reference is reference and trainer.config is config
    assert trainer.step == 0
    assert trainer.history == []


def test_learning_rate_follows_warmup_then_linear_decay():
    trainer = make_trainer(learning_rate=0.5, warmup_steps=2, total_steps=6)
    expected = [0.25, 0.5, 0.5, 0.375, 0.25, 0.125, 0.0, 0.0]
    seen = []
    for step in range(len(expected)):
        trainer.step = step
        seen.append(trainer.learning_rate)
    assert seen == pytest.approx(expected, abs=1e-12)


def test_batch_logps_is_a_static_method_scoring_both_sides():
    trainer = make_trainer()
    chosen, rejected = Trainer.batch_logps(trainer.policy, BATCHES[0])
    assert chosen == pytest.approx([trainer.policy.sequence_logp(p["chosen"]) for p in BATCHES[0]], abs=1e-12)
    assert rejected == pytest.approx([trainer.policy.sequence_logp(p["rejected"]) for p in BATCHES[0]], abs=1e-12)


def test_metrics_before_training_are_those_of_a_zero_margin():
    metrics = make_trainer().compute_metrics(BATCHES[1])
    assert set(metrics) == {"loss", "reward_margin", "reward_accuracy"}
    assert metrics["loss"] == pytest.approx(math.log(2.0), abs=1e-12)
    assert metrics["reward_margin"] == pytest.approx(0.0, abs=1e-12)
    assert metrics["reward_accuracy"] == 0.0


def test_metrics_use_the_configured_loss():
    trainer = make_trainer(ipo=True, beta=0.25)
    trainer.policy.weights["seven"] = 1.5
    metrics = trainer.compute_metrics(BATCHES[0])
    pc, pr = Trainer.batch_logps(trainer.policy, BATCHES[0])
    rc, rr = Trainer.batch_logps(trainer.reference, BATCHES[0])
    losses, chosen, rejected = preference_loss(pc, pr, rc, rr, 0.25, 0.0, True)
    assert metrics["loss"] == pytest.approx(sum(losses) / len(losses), abs=1e-12)
    margins = [c - r for c, r in zip(chosen, rejected)]
    assert metrics["reward_margin"] == pytest.approx(sum(margins) / len(margins), abs=1e-12)
    assert metrics["reward_accuracy"] == pytest.approx(0.5)


def test_train_step_returns_pre_update_metrics_and_records_history():
    trainer = make_trainer()
    before = trainer.compute_metrics(BATCHES[0])
    returned = trainer.train_step(BATCHES[0])
    assert returned == pytest.approx(before)
    assert trainer.step == 1
    assert trainer.history == [returned]
    assert trainer.compute_metrics(BATCHES[0])["loss"] < before["loss"]


def test_reference_model_is_frozen():
    trainer = make_trainer()
    frozen = dict(trainer.reference.weights)
    for batch in BATCHES * 2:
        trainer.train_step(batch)
    assert trainer.reference.weights == frozen
    assert trainer.policy.weights != frozen


@pytest.mark.parametrize("run", RECORDED["runs"], ids=[r["name"] for r in RECORDED["runs"]])
def test_training_trajectory_matches_recorded_run(run):
    trainer = make_trainer(**run["config"])
    for i, expected in enumerate(run["steps"]):
        assert trainer.learning_rate == pytest.approx(expected["learning_rate"], abs=1e-12)
        metrics = trainer.train_step(BATCHES[i % len(BATCHES)])
        for key in ("loss", "reward_margin", "reward_accuracy"):
            assert metrics[key] == pytest.approx(expected[key], abs=1e-9), (i, key)
    for token, weight in run["final_weights"].items():
        assert trainer.policy.weights[token] == pytest.approx(weight, abs=1e-9), token


def test_evaluate_is_a_coroutine_averaging_batch_metrics():
    trainer = make_trainer()
    trainer.train_step(BATCHES[0])
    assert inspect.iscoroutinefunction(Trainer.evaluate)
    result = asyncio.run(trainer.evaluate(BATCHES))
    rows = [trainer.compute_metrics(batch) for batch in BATCHES]
    assert set(result) == set(rows[0])
    for key in rows[0]:
        assert result[key] == pytest.approx(sum(r[key] for r in rows) / len(rows), abs=1e-12)
    assert trainer.step == 1, "evaluate must not train"


def test_evaluate_yields_to_the_event_loop_between_batches():
    trainer = make_trainer()
    log = []
    score = trainer.compute_metrics

    def logged(batch):
        log.append("batch")
        return score(batch)

    trainer.compute_metrics = logged

    async def ticker():
        for _ in range(3):
            log.append("tick")
            await asyncio.sleep(0)

    async def both():
        evaluation = asyncio.ensure_future(trainer.evaluate([BATCHES[0]] * 3))
        await asyncio.gather(evaluation, ticker())
        return evaluation.result()

    result = asyncio.run(both())
    assert result["loss"] == pytest.approx(math.log(2.0), abs=1e-12)
    assert log.count("batch") == 3
    last_batch = len(log) - 1 - log[::-1].index("batch")
    assert "tick" in log[:last_batch], f"evaluate never yielded: {log}"
