"""Replay of the reference's SimPOTrainer.simpo_loss on the batches in fixtures/simpo_cases.json.

generators/simpo_cases.py wrote that file by running the reference (in float64) on
length-normalised log-probabilities of chosen and rejected responses, with the
hyper-parameters of the upstream's training configurations. Each case here builds the
trainer the same way (without its constructor: only the attributes the loss reads), feeds
the inputs in the case's dtype and compares the three returned tensors with the recording,
within a tolerance that the dtype's arithmetic meets; the bad loss type must raise.

The trainer lives in the candidate process (lmr_bridge): the probe `simpo_loss_call` builds
it there from the case's four hyper-parameters and makes the call; the inputs go there,
the three tensors come back as plain data, and the recorded values, which never leave this
process, decide each test here.
"""
import json
import math
from pathlib import Path

import pytest
import torch
from lmr_bridge import probe, probe_helper

_isclose = math.isclose
TOLERANCE = {"float32": (1e-5, 2e-5), "float64": (1e-9, 1e-10)}  # (rtol, atol)
DTYPES = {"float32": torch.float32, "float64": torch.float64}

CASES = json.loads((Path(__file__).resolve().parent / "../fixtures/simpo_cases.json").read_text())["cases"]


@probe_helper
def build_trainer(settings):
    """In the candidate: a SimPOTrainer without its constructor, with only what the loss reads."""
    from accelerate import Accelerator
    from simpo_trainer import SimPOTrainer

    trainer = object.__new__(SimPOTrainer)
    trainer.beta = settings["beta"]
    trainer.gamma_beta_ratio = settings["gamma_beta_ratio"]
    trainer.loss_type = settings["loss_type"]
    trainer.label_smoothing = settings["label_smoothing"]
    trainer.sft_weight = 0.0
    trainer.accelerator = Accelerator(cpu=True)
    return trainer


@probe
def simpo_loss_call(settings, chosen, rejected):
    """In the candidate: simpo_loss of a trainer with these settings; its result as it is."""
    return build_trainer(settings).simpo_loss(chosen, rejected)


class Trainer:
    """The settings of the trainer the candidate builds for each call."""

    def __init__(self, settings):
        self.settings = settings

    def simpo_loss(self, chosen, rejected):
        return simpo_loss_call(self.settings, chosen, rejected)


def make_trainer(case):
    return Trainer({k: case[k] for k in ("beta", "gamma_beta_ratio", "loss_type", "label_smoothing")})


def inputs(case):
    dtype = DTYPES[case["dtype"]]
    return (torch.tensor(case["policy_chosen_logps"], dtype=dtype),
            torch.tensor(case["policy_rejected_logps"], dtype=dtype))


def assert_values(name, got, expected, dtype):
    rtol, atol = TOLERANCE[dtype]
    assert isinstance(got, torch.Tensor), "%s: expected a tensor, got %r" % (name, type(got))
    assert tuple(got.shape) == (len(expected),), "%s: shape %s, expected (%d,)" % (name, tuple(got.shape), len(expected))
    assert got.dtype == DTYPES[dtype], "%s: dtype %s, expected %s" % (name, got.dtype, DTYPES[dtype])
    for i, (g, e) in enumerate(zip(got.detach().tolist(), expected)):
        assert _isclose(g, e, rel_tol=rtol, abs_tol=atol), "%s[%d]: expected %r, got %r" % (name, i, e, g)


VALUED = [c for c in CASES if "raises" not in c]
RAISING = [c for c in CASES if "raises" in c]


@pytest.mark.parametrize("case", VALUED, ids=[c["name"] for c in VALUED])
def test_simpo_loss_matches_recorded_case(case):
    result = make_trainer(case).simpo_loss(*inputs(case))
    assert isinstance(result, tuple) and len(result) == 3, "expected a tuple (losses, chosen_rewards, rejected_rewards)"
    for name, got in zip(("losses", "chosen_rewards", "rejected_rewards"), result):
        assert_values(name, got, case[name], case["dtype"])


@pytest.mark.parametrize("case", RAISING, ids=[c["name"] for c in RAISING])
def test_simpo_loss_raises_as_recorded(case):
    assert case["raises"] == "ValueError"
    with pytest.raises(ValueError):
        make_trainer(case).simpo_loss(*inputs(case))
