"""Grader tests for trainers.Trainer (every method of the class is masked).

The trainer lives in the candidate process (lmr_bridge): each probe below builds one there,
drives it, and returns plain data; the assertions are made here, on values this process built.
"""
import json
import math
from pathlib import Path

import pytest
from lmr_bridge import probe, probe_helper

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDED = json.loads((FIXTURES / "training_runs.json").read_text(encoding="utf-8"))
BATCHES = RECORDED["batches"]
PAIRS = [pair for batch in BATCHES for pair in batch]
RUN_IDS = [r["name"] for r in RECORDED["runs"]]


def ipo_losses_and_rewards(pc, pr, rc, rr, beta):
    """IPO's losses and DPO's implicit rewards, written here: nothing the candidate computes
    decides what these tests expect."""
    losses = [((a - b) - (c - d) - 1.0 / (2.0 * beta)) ** 2 for a, b, c, d in zip(pc, pr, rc, rr)]
    return losses, [beta * (a - c) for a, c in zip(pc, rc)], [beta * (b - d) for b, d in zip(pr, rr)]


@probe_helper
def make_trainer(pairs, overrides):
    from models import BagOfWordsPolicy
    from trainers import Trainer, TrainerConfig

    texts = [p["chosen"] for p in pairs] + [p["rejected"] for p in pairs]
    policy = BagOfWordsPolicy.from_corpus(texts)
    config = TrainerConfig(**{"beta": 0.5, "learning_rate": 0.5, "warmup_steps": 0, "total_steps": 100, **overrides})
    return Trainer(policy, policy.copy(), config)


@probe
def constructed():
    from models import BagOfWordsPolicy
    from trainers import Trainer, TrainerConfig

    policy = BagOfWordsPolicy(["a", "b"])
    reference = policy.copy()
    config = TrainerConfig()
    trainer = Trainer(policy, reference, config)
    kept = trainer.policy is policy and trainer.reference is reference and trainer.config is config
    return {"kept": kept, "step": trainer.step, "history": trainer.history}


def test_constructor_keeps_its_arguments_and_starts_at_step_zero():
    assert constructed() == {"kept": True, "step": 0, "history": []}


@probe
def learning_rates(pairs, overrides, steps):
    trainer = make_trainer(pairs, overrides)
    seen = []
    for step in range(steps):
        trainer.step = step  # `step` is public: e.g. a run resumed from a checkpoint sets it
        seen.append(trainer.learning_rate)
    return seen


def test_learning_rate_follows_warmup_then_linear_decay():
    expected = [0.25, 0.5, 0.5, 0.375, 0.25, 0.125, 0.0, 0.0]
    seen = learning_rates(PAIRS, {"learning_rate": 0.5, "warmup_steps": 2, "total_steps": 6}, len(expected))
    assert pytest.approx(expected, abs=1e-12) == seen


@probe
def batch_logps(pairs, batch):
    from trainers import Trainer

    trainer = make_trainer(pairs, {})
    chosen, rejected = Trainer.batch_logps(trainer.policy, batch)
    return {
        "chosen": list(chosen),
        "rejected": list(rejected),
        "want_chosen": [trainer.policy.sequence_logp(p["chosen"]) for p in batch],
        "want_rejected": [trainer.policy.sequence_logp(p["rejected"]) for p in batch],
    }


def test_batch_logps_is_a_static_method_scoring_both_sides():
    got = batch_logps(PAIRS, BATCHES[0])
    assert pytest.approx(got["want_chosen"], abs=1e-12) == got["chosen"]
    assert pytest.approx(got["want_rejected"], abs=1e-12) == got["rejected"]


@probe
def metrics_of(pairs, overrides, batch, weights):
    trainer = make_trainer(pairs, overrides)
    trainer.policy.weights.update(weights)
    metrics = trainer.compute_metrics(batch)
    logps = {
        side: [model.sequence_logp(p[key]) for p in batch]
        for side, model, key in [("pc", trainer.policy, "chosen"), ("pr", trainer.policy, "rejected"), ("rc", trainer.reference, "chosen"), ("rr", trainer.reference, "rejected")]
    }
    return {"metrics": metrics, "logps": logps}


def test_metrics_before_training_are_those_of_a_zero_margin():
    metrics = metrics_of(PAIRS, {}, BATCHES[1], {})["metrics"]
    assert set(metrics) == {"loss", "reward_margin", "reward_accuracy"}
    assert pytest.approx(math.log(2.0), abs=1e-12) == metrics["loss"]
    assert pytest.approx(0.0, abs=1e-12) == metrics["reward_margin"]
    assert metrics["reward_accuracy"] == 0.0


def test_metrics_are_means_of_the_configured_loss_and_rewards():
    # the first pair now has a positive margin, the second a negative one
    got = metrics_of(PAIRS, {"ipo": True, "beta": 0.25}, BATCHES[0], {"seven": 1.5})
    metrics, lp = got["metrics"], got["logps"]
    losses, chosen, rejected = ipo_losses_and_rewards(lp["pc"], lp["pr"], lp["rc"], lp["rr"], 0.25)
    margins = [c - r for c, r in zip(chosen, rejected)]
    assert pytest.approx(sum(losses) / len(losses), abs=1e-12) == metrics["loss"]
    assert pytest.approx(sum(margins) / len(margins), abs=1e-12) == metrics["reward_margin"]
    assert pytest.approx(0.5, abs=1e-12) == metrics["reward_accuracy"]


@probe
def training(pairs, overrides, batches):
    """Metrics before each step, what each step returned, the trainer's state after, and the
    loss on each batch after the steps."""
    trainer = make_trainer(pairs, overrides)
    frozen = dict(trainer.reference.weights)
    before, returned = [], []
    for batch in batches:
        before.append(trainer.compute_metrics(batch))
        returned.append(trainer.train_step(batch))
    return {
        "before": before,
        "returned": returned,
        "step": trainer.step,
        "history": trainer.history,
        "history_is_returned": all(h is r for h, r in zip(trainer.history, returned)),
        "after_loss": [trainer.compute_metrics(b)["loss"] for b in batches],
        "reference_frozen": trainer.reference.weights == frozen,
        "policy_moved": trainer.policy.weights != frozen,
        "weights": dict(trainer.policy.weights),
    }


def test_train_step_returns_the_metrics_measured_before_the_update():
    got = training(PAIRS, {}, [BATCHES[0]])
    assert set(got["returned"][0]) == set(got["before"][0])
    for key, value in got["before"][0].items():
        assert pytest.approx(value, abs=1e-12) == got["returned"][0][key], key


def test_train_step_counts_the_step_and_appends_its_metrics_to_history():
    got = training(PAIRS, {}, [BATCHES[0], BATCHES[1]])
    assert got["step"] == 2
    assert got["history"] == got["returned"] and got["history_is_returned"]


def test_train_step_lowers_the_loss_on_its_batch():
    got = training(PAIRS, {}, [BATCHES[0]])
    assert got["after_loss"][0] < got["before"][0]["loss"] - 1e-6


def test_reference_model_is_frozen():
    got = training(PAIRS, {}, BATCHES * 2)
    assert got["reference_frozen"]
    assert got["policy_moved"]


@probe
def recorded_run(pairs, config, batches, n_steps):
    trainer = make_trainer(pairs, config)
    metrics = [trainer.train_step(batches[i % len(batches)]) for i in range(n_steps)]
    return {"metrics": metrics, "weights": dict(trainer.policy.weights)}


@pytest.mark.parametrize("run", RECORDED["runs"], ids=RUN_IDS)
def test_training_metrics_match_recorded_run(run):
    got = recorded_run(PAIRS, run["config"], BATCHES, len(run["steps"]))
    for i, (expected, metrics) in enumerate(zip(run["steps"], got["metrics"])):
        for key in ("loss", "reward_margin", "reward_accuracy"):
            assert pytest.approx(expected[key], abs=1e-9) == metrics[key], (i, key)


@pytest.mark.parametrize("run", RECORDED["runs"], ids=RUN_IDS)
def test_final_weights_match_recorded_run(run):
    weights = recorded_run(PAIRS, run["config"], BATCHES, len(run["steps"]))["weights"]
    assert set(weights) == set(run["final_weights"])
    for token, weight in run["final_weights"].items():
        assert pytest.approx(weight, abs=1e-9) == weights[token], token


@probe
def evaluation(pairs, batches):
    import asyncio

    trainer = make_trainer(pairs, {})
    trainer.train_step(batches[0])  # so that the two batches have different metrics
    weights, history, step = dict(trainer.policy.weights), list(trainer.history), trainer.step
    result = asyncio.run(trainer.evaluate(batches))
    rows = [trainer.compute_metrics(batch) for batch in batches]
    return {
        "result": result,
        "rows": rows,
        "unchanged": trainer.step == step and trainer.policy.weights == weights and trainer.history == history,
    }


def test_evaluate_averages_the_batch_metrics():
    got = evaluation(PAIRS, BATCHES)
    rows = got["rows"]
    assert set(got["result"]) == set(rows[0])
    for key in rows[0]:
        assert pytest.approx(sum(r[key] for r in rows) / len(rows), abs=1e-12) == got["result"][key], key


def test_evaluate_does_not_train():
    assert evaluation(PAIRS, BATCHES)["unchanged"]


@probe_helper
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


@probe
def interleaving(pairs, batches):
    import asyncio

    trainer = make_trainer(pairs, {})
    log = []
    logged = [LoggedBatch(batches[i % 2], f"batch{i}", log) for i in range(3)]

    async def ticker():
        for _ in range(3):
            log.append("tick")
            await asyncio.sleep(0)

    async def both():
        evaluation = asyncio.ensure_future(trainer.evaluate(logged))
        await asyncio.gather(evaluation, ticker())

    asyncio.run(both())
    return log


def test_evaluate_yields_to_the_event_loop_between_batches():
    log = interleaving(PAIRS, BATCHES)
    first, last = log.index("batch0"), log.index("batch2")
    assert "tick" in log[first:last], f"no other coroutine ran while evaluate went through the batches: {log}"
