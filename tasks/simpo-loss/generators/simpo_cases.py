"""Generator for fixtures/simpo_cases.json: the reference SimPOTrainer.simpo_loss on batches we make.

Run by the toolkit (or by hand) with the current directory at the root of the task's
reference tree, after the grader's tests/conftest.py (which puts scripts/ on sys.path),
and with LMR_FIXTURES_OUT naming the output folder. Why a generator and not a driver:
the method reads `self.accelerator.device`, and `lmr record` cannot store an
accelerate.Accelerator as part of `self`; this script stores the four hyper-parameters
the method reads instead, and the replay test builds the trainer around them.

Each case is one batch as SimPOTrainer.concatenated_forward hands it to the loss: the
length-normalised (per-token average) log-probabilities of B chosen and B rejected
responses. Each value is the mean of |y| per-token log-probabilities drawn with Python's
`random` (|y| from 1 to 60 tokens), so the inputs are the same on every machine; for a
float32 case they are rounded to float32 first. The
trainer's hyper-parameters are those of the upstream's training_configs/ (beta 2 to 10,
gamma_beta_ratio 0.1 to 0.8), plus label smoothing, the hinge loss and a bad loss type.
The expected outputs are the reference run in float64, written with 12 significant
digits, so the file does not depend on the last bits of a vectorised kernel.
"""
import json
import os
import random
import struct
import sys

import torch

random.seed(0)
torch.manual_seed(0)

sys.path.insert(0, os.path.join(os.getcwd(), "scripts"))
from accelerate import Accelerator  # noqa: E402

from simpo_trainer import SimPOTrainer  # noqa: E402

OUTPUT = "fixtures/simpo_cases.json"


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def average_logp(rng, confidence):
    """Mean of |y| per-token log-probabilities; higher `confidence` gives values nearer 0."""
    length = rng.randint(1, 60)
    return sum(-rng.expovariate(confidence) for _ in range(length)) / length


def batch(rng, size, chosen_confidence=1.2, rejected_confidence=0.9):
    chosen = [average_logp(rng, chosen_confidence) for _ in range(size)]
    rejected = [average_logp(rng, rejected_confidence) for _ in range(size)]
    return chosen, rejected


def cases():
    rng = random.Random(2405_14734)
    out = []

    def add(name, dtype, beta, gamma_beta_ratio, loss_type, label_smoothing, chosen, rejected):
        if dtype == "float32":  # values a float32 tensor holds exactly
            chosen, rejected = [f32(v) for v in chosen], [f32(v) for v in rejected]
        out.append({
            "name": name, "dtype": dtype, "beta": beta, "gamma_beta_ratio": gamma_beta_ratio,
            "loss_type": loss_type, "label_smoothing": label_smoothing,
            "policy_chosen_logps": chosen, "policy_rejected_logps": rejected,
        })

    add("defaults-b4", "float32", 2.0, 0.25, "sigmoid", 0.0, *batch(rng, 4))
    add("mistral-base-b8", "float32", 2.0, 0.8, "sigmoid", 0.0, *batch(rng, 8))
    add("mistral-instruct-b8", "float32", 2.5, 0.1, "sigmoid", 0.0, *batch(rng, 8))
    add("llama3-base-b6", "float64", 2.0, 0.5, "sigmoid", 0.0, *batch(rng, 6))
    add("llama3-instruct-b5", "float32", 2.5, 0.55, "sigmoid", 0.0, *batch(rng, 5))
    add("llama3-instruct-v2-b16", "float64", 10.0, 0.3, "sigmoid", 0.0, *batch(rng, 16))
    add("gemma2-b12", "float32", 10.0, 0.5, "sigmoid", 0.0, *batch(rng, 12, 1.0, 1.0))
    add("one-pair", "float32", 2.0, 0.5, "sigmoid", 0.0, *batch(rng, 1))
    add("label-smoothing-0.1", "float32", 2.0, 0.5, "sigmoid", 0.1, *batch(rng, 8))
    add("label-smoothing-0.3-b10", "float64", 10.0, 0.3, "sigmoid", 0.3, *batch(rng, 6))
    add("hinge-b2", "float32", 2.0, 0.5, "hinge", 0.0, *batch(rng, 8))
    add("hinge-b10", "float64", 10.0, 0.3, "hinge", 0.0, *batch(rng, 8, 2.0, 0.7))
    add("hinge-ignores-label-smoothing", "float32", 2.5, 0.55, "hinge", 0.2, *batch(rng, 6))
    add("unknown-loss-type", "float32", 2.0, 0.5, "ipo", 0.0, *batch(rng, 3))
    return out


def run(case, accelerator):
    trainer = object.__new__(SimPOTrainer)
    trainer.beta = case["beta"]
    trainer.gamma_beta_ratio = case["gamma_beta_ratio"]
    trainer.loss_type = case["loss_type"]
    trainer.label_smoothing = case["label_smoothing"]
    trainer.accelerator = accelerator
    chosen = torch.tensor(case["policy_chosen_logps"], dtype=torch.float64)
    rejected = torch.tensor(case["policy_rejected_logps"], dtype=torch.float64)
    case = dict(case)
    try:
        losses, chosen_rewards, rejected_rewards = trainer.simpo_loss(chosen, rejected)
    except ValueError as e:
        case["raises"] = type(e).__name__
        return case
    digits = lambda t: [float("%.12g" % v) for v in t.tolist()]  # noqa: E731
    case["losses"] = digits(losses)
    case["chosen_rewards"] = digits(chosen_rewards)
    case["rejected_rewards"] = digits(rejected_rewards)
    return case


def main():
    accelerator = Accelerator(cpu=True)
    doc = {
        "format": "simpo-loss-cases/1",
        "about": "SimPOTrainer.simpo_loss (scripts/simpo_trainer.py) of the reference on length-normalised log-probabilities; outputs computed in float64, 12 significant digits",
        "cases": [run(c, accelerator) for c in cases()],
    }
    path = os.path.join(os.environ["LMR_FIXTURES_OUT"], OUTPUT)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, sort_keys=True, indent=1) + "\n")


if __name__ == "__main__":
    main()
