"""Grader tests for trainers.preference_loss (DPO, conservative DPO, IPO).

The function runs in the candidate process (lmr_bridge): what it returns comes back as
plain data, so the comparisons below are between values this process built.
"""
import json
import math
from pathlib import Path

import pytest
from lmr_bridge import candidate

preference_loss = candidate.function("trainers:preference_loss")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = json.loads((FIXTURES / "preference_cases.json").read_text(encoding="utf-8"))


def call(pc, pr, rc, rr, beta=0.1, label_smoothing=0.0, ipo=False):
    return preference_loss(pc, pr, rc, rr, beta, label_smoothing=label_smoothing, ipo=ipo)


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_matches_recorded_values(case):
    inputs = CASES["inputs"]
    losses, chosen, rejected = preference_loss(
        inputs["policy_chosen_logps"], inputs["policy_rejected_logps"],
        inputs["reference_chosen_logps"], inputs["reference_rejected_logps"],
        case["beta"], label_smoothing=case["label_smoothing"], ipo=case["ipo"],
    )
    expected = case["expected"]
    assert len(losses) == len(chosen) == len(rejected) == len(expected["losses"])
    assert pytest.approx(expected["losses"], abs=1e-9) == losses
    assert pytest.approx(expected["chosen_rewards"], abs=1e-9) == chosen
    assert pytest.approx(expected["rejected_rewards"], abs=1e-9) == rejected


def test_zero_margin_gives_log_two_for_any_smoothing():
    for smoothing in (0.0, 0.1, 0.5):
        losses, _, _ = call([-3.0], [-5.0], [-4.0], [-6.0], beta=0.7, label_smoothing=smoothing)
        assert losses[0] == pytest.approx(math.log(2.0), abs=1e-12)


def test_ipo_zero_margin_is_squared_target():
    losses, _, _ = call([-2.0, -9.0], [-2.0, -1.0], [-1.0, -3.0], [-1.0, 5.0], beta=0.25, ipo=True)
    assert losses == pytest.approx([4.0, 4.0], abs=1e-12)


def test_rewards_are_beta_times_the_log_ratios_for_either_loss():
    args = ([-1.0, -2.0], [-3.0, -0.5], [-1.5, -2.5], [-2.0, -1.0])
    for ipo in (False, True):
        _, chosen, rejected = call(*args, beta=0.3, label_smoothing=0.0, ipo=ipo)
        assert chosen == pytest.approx([0.15, 0.15], abs=1e-12)
        assert rejected == pytest.approx([-0.3, 0.15], abs=1e-12)


def test_ipo_ignores_label_smoothing():
    args = ([-1.0, -6.0], [-4.0, -2.0], [-2.0, -3.0], [-2.5, -3.5])
    plain, _, _ = call(*args, beta=0.4, label_smoothing=0.0, ipo=True)
    smoothed, _, _ = call(*args, beta=0.4, label_smoothing=0.3, ipo=True)
    assert smoothed == pytest.approx(plain, abs=1e-12)


def test_label_smoothing_is_symmetric_in_the_margin():
    forward, _, _ = call([-1.0], [-4.0], [-2.0], [-2.5], beta=0.4, label_smoothing=0.2)
    backward, _, _ = call([-4.0], [-1.0], [-2.5], [-2.0], beta=0.4, label_smoothing=0.8)
    assert forward[0] == pytest.approx(backward[0], abs=1e-12)
    assert forward[0] != pytest.approx(math.log(2.0), abs=1e-3)


def test_loss_decreases_as_chosen_logp_rises():
    losses = [call([c], [-5.0], [-5.0], [-5.0], beta=0.5)[0][0] for c in (-8.0, -6.0, -5.0, -4.0, -1.0)]
    assert all(a > b for a, b in zip(losses, losses[1:]))


def test_large_margins_stay_finite():
    losses, _, _ = call([0.0, -5000.0], [-5000.0, 0.0], [0.0, 0.0], [0.0, 0.0], beta=1.0)
    assert losses[0] == pytest.approx(0.0, abs=1e-12)
    assert losses[1] == pytest.approx(5000.0, rel=1e-9)
    assert all(math.isfinite(x) for x in losses)


def test_empty_batch_returns_empty_lists():
    losses, chosen, rejected = call([], [], [], [], beta=0.1)
    assert list(losses) == [] and list(chosen) == [] and list(rejected) == []


def test_rejects_mismatched_lengths():
    with pytest.raises(ValueError):
        call([-1.0, -2.0], [-1.0], [-1.0, -2.0], [-1.0, -2.0])


@pytest.mark.parametrize("beta", [0.0, -0.5])
def test_rejects_non_positive_beta(beta):
    with pytest.raises(ValueError):
        call([-1.0], [-2.0], [-1.0], [-2.0], beta=beta)
