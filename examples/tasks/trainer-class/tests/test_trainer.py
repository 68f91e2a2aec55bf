"""Grader tests for trainers.Trainer (every method of the class is masked)."""
import asyncio
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
RUN_IDS = [r["name"] for r in RECORDED["runs"]]


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
        trainer.step = step  # `step` is public: e.g. a run resumed from a checkpoint sets it
        seen.append(trainer.learning_rate)
    assert seen == pytest.approx(expected, abs=1e-12)


def test_batch_logps_is_a_static_method_scoring_both_sides():
    trainer = make_trainer()
    chosen, rejected = Trainer.batch_logps(trainer.policy, BATCHES[0])
    assert list(chosen) == pytest.approx([trainer.policy.sequence_logp(p["chosen"]) for p in BATCHES[0]], abs=1e-12)
    assert list(rejected) == pytest.approx([trainer.policy.sequence_logp(p["rejected"]) for p in BATCHES[0]], abs=1e-12)


def test_metrics_before_training_are_those_of_a_zero_margin():
    metrics = make_trainer().compute_metrics(BATCHES[1])
    assert set(metrics) == {"loss", "reward_margin", "reward_accuracy"}
    assert metrics["loss"] == pytest.approx(math.log(2.0), abs=1e-12)
    assert metrics["reward_margin"] == pytest.approx(0.0, abs=1e-12)
    assert metrics["reward_accuracy"] == 0.0


def test_metrics_are_means_of_the_configured_loss_and_rewards():
    trainer = make_trainer(ipo=True, beta=0.25)
    trainer.policy.weights["seven"] = 1.5  # the first pair now has a positive margin, the second a negative one
    metrics = trainer.compute_metrics(BATCHES[0])
    pc = [trainer.policy.sequence_logp(p["chosen"]) for p in BATCHES[0]]
    pr = [trainer.policy.sequence_logp(p["rejected"]) for p in BATCHES[0]]
    rc = [trainer.reference.sequence_logp(p["chosen"]) for p in BATCHES[0]]
    rr = [trainer.reference.sequence_logp(p["rejected"]) for p in BATCHES[0]]
    losses, chosen, rejected = preference_loss(pc, pr, rc, rr, 0.25, 0.0, True)
    margins = [c - r for c, r in zip(chosen, rejected)]
    assert metrics["loss"] == pytest.approx(sum(losses) / len(losses), abs=1e-12)
    assert metrics["reward_margin"] == pytest.approx(sum(margins) / len(margins), abs=1e-12)
    assert metrics["reward_accuracy"] == pytest.approx(0.5, abs=1e-12)


def test_train_step_returns_the_metrics_measured_before_the_update():
    trainer = make_trainer()
    before = trainer.compute_metrics(BATCHES[0])
    returned = trainer.train_step(BATCHES[0])
    assert returned == pytest.approx(before, abs=1e-12)


def test_train_step_counts_the_step_and_appends_its_metrics_to_history():
    trainer = make_trainer()
    first = trainer.train_step(BATCHES[0])
    second = trainer.train_step(BATCHES[1])
    assert trainer.step == 2
    assert trainer.history == [first, second]


def test_train_step_lowers_the_loss_on_its_batch():
    trainer = make_trainer()
    before = trainer.compute_metrics(BATCHES[0])["loss"]
    trainer.train_step(BATCHES[0])
    assert trainer.compute_metrics(BATCHES[0])["loss"] < before - 1e-6


def test_reference_model_is_frozen():
    trainer = make_trainer()
    frozen = dict(trainer.reference.weights)
    for batch in BATCHES * 2:
        trainer.train_step(batch)
    assert trainer.reference.weights == frozen
    assert trainer.policy.weights != frozen


@pytest.mark.parametrize("run", RECORDED["runs"], ids=RUN_IDS)
def test_training_metrics_match_recorded_run(run):
    trainer = make_trainer(**run["config"])
    for i, expected in enumerate(run["steps"]):
        metrics = trainer.train_step(BATCHES[i % len(BATCHES)])
        for key in ("loss", "reward_margin", "reward_accuracy"):
            assert metrics[key] == pytest.approx(expected[key], abs=1e-9), (i, key)


@pytest.mark.parametrize("run", RECORDED["runs"], ids=RUN_IDS)
def test_final_weights_match_recorded_run(run):
    trainer = make_trainer(**run["config"])
    for i in range(len(run["steps"])):
        trainer.train_step(BATCHES[i % len(BATCHES)])
    assert set(trainer.policy.weights) == set(run["final_weights"])
    for token, weight in run["final_weights"].items():
        assert trainer.policy.weights[token] == pytest.approx(weight, abs=1e-9), token


def test_evaluate_averages_the_batch_metrics():
    trainer = make_trainer()
    trainer.train_step(BATCHES[0])  # so that the two batches have different metrics
    result = asyncio.run(trainer.evaluate(BATCHES))
    rows = [trainer.compute_metrics(batch) for batch in BATCHES]
    assert set(result) == set(rows[0])
    for key in rows[0]:
        assert result[key] == pytest.approx(sum(r[key] for r in rows) / len(rows), abs=1e-12), key


def test_evaluate_does_not_train():
    trainer = make_trainer()
    trainer.train_step(BATCHES[0])
    weights, history = dict(trainer.policy.weights), list(trainer.history)
    asyncio.run(trainer.evaluate(BATCHES))
    assert trainer.step == 1
    assert trainer.policy.weights == weights
    assert trainer.history == history


class LoggedBatch(list):
    """A batch that notes in `log` every time it is read, however it is read."""

    def __init__(self, pairs, label, log):
        super().__init__(pairs)
        self.label, self.log = label, log

    def __iter__(self):
        self.log.append(self.label)
        return super().__iter__()

    def __getitem__(self, index):
        self.log.append(self.label)
        return super().__getitem__(index)


def test_evaluate_yields_to_the_event_loop_between_batches():
    trainer = make_trainer()
    log = []
    batches = [LoggedBatch(BATCHES[i % 2], f"batch{i}", log) for i in range(3)]

    async def ticker():
        for _ in range(3):
            log.append("tick")
            await asyncio.sleep(0)

    async def both():
        evaluation = asyncio.ensure_future(trainer.evaluate(batches))
        await asyncio.gather(evaluation, ticker())

    asyncio.run(both())
    first, last = log.index("batch0"), log.index("batch2")
    assert "tick" in log[first:last], f"no other coroutine ran while evaluate went through the batches: {log}"
