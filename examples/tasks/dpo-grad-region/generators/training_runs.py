"""Writes fixtures/training_runs.json: short training runs of the reference Trainer, one per
loss setting (DPO, label-smoothed DPO and IPO, several beta).

Each run starts the policy from fixed, non-zero weights (so that the pairs' margins differ
from the first step on) against a reference with all weights zero, calls train_step 6 times
alternating over the two batches, and keeps the loss each step returns and the policy
weights at the end. Run by `lmr record` from the root of the reference tree with
$LMR_FIXTURES_OUT set. Nothing here is random.
"""
import json
import os
import random
import sys

random.seed(0)  # nothing below draws from it; seeded so that the contract holds if that changes
sys.path.insert(0, os.getcwd())

from models import BagOfWordsPolicy  # noqa: E402
from trainers import Trainer, TrainerConfig  # noqa: E402  (train_step with the reference region)

BATCHES = [
    [
        {"prompt": "q1", "chosen": "the answer is seven", "rejected": "the answer is nine"},
        {"prompt": "q2", "chosen": "use a long passphrase", "rejected": "use your birthday"},
    ],
    [
        {"prompt": "q3", "chosen": "sales rose while costs stayed flat", "rejected": "the report is long"},
        {"prompt": "q4", "chosen": "no the sky is blue", "rejected": "yes the sky is green"},
    ],
]
STEPS = 6
RUNS = [
    ("dpo", {"beta": 0.5, "label_smoothing": 0.0, "ipo": False, "learning_rate": 0.5}),
    ("dpo-small-beta", {"beta": 0.05, "label_smoothing": 0.0, "ipo": False, "learning_rate": 2.0}),
    ("cdpo", {"beta": 0.5, "label_smoothing": 0.25, "ipo": False, "learning_rate": 0.5}),
    ("cdpo-heavy", {"beta": 1.5, "label_smoothing": 0.45, "ipo": False, "learning_rate": 0.5}),
    ("ipo", {"beta": 0.5, "label_smoothing": 0.0, "ipo": True, "learning_rate": 0.05}),
    ("ipo-large-beta", {"beta": 2.0, "label_smoothing": 0.0, "ipo": True, "learning_rate": 0.05}),
]


def start_weights(vocab):
    """The fixed starting point the tests rebuild: ((37 i) mod 11 - 5) / 10 for the i-th token."""
    return {token: ((i * 37) % 11 - 5) / 10.0 for i, token in enumerate(vocab)}


def write_json(rel, data):
    path = os.path.join(os.environ["LMR_FIXTURES_OUT"], rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # json writes floats with repr (the shortest text that reads back to the same double)
    text = json.dumps(data, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=True) + "\n"
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


pairs = [pair for batch in BATCHES for pair in batch]
texts = [p["chosen"] for p in pairs] + [p["rejected"] for p in pairs]
runs = []
for name, settings in RUNS:
    config = {**settings, "warmup_steps": 0, "total_steps": 1000}
    reference = BagOfWordsPolicy.from_corpus(texts)
    policy = BagOfWordsPolicy(reference.vocab, start_weights(reference.vocab))
    trainer = Trainer(policy, reference, TrainerConfig(**config))
    losses = [float(trainer.train_step(BATCHES[i % len(BATCHES)])["loss"]) for i in range(STEPS)]
    runs.append({
        "name": name,
        "config": config,
        "losses": losses,
        "final_weights": {tok: float(w) for tok, w in sorted(trainer.policy.weights.items())},
    })

write_json("fixtures/training_runs.json", {
    "about": "Written by generators/training_runs.py from the reference Trainer.train_step of "
             "pref-trainer: per run, the loss of 6 train_step calls alternating over `batches` "
             "and the policy weights after the last one.",
    "batches": BATCHES,
    "runs": runs,
})
