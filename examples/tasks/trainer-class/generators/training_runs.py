"""Writes fixtures/training_runs.json: short training runs of the reference Trainer.

Each run builds the policy with BagOfWordsPolicy.from_corpus(every chosen and rejected text,
in batch order), the reference as policy.copy(), and calls train_step 6 times, alternating
over the two batches; it keeps the metrics each step returns and the policy weights at the
end. Run by `lmr record` from the root of the reference tree with $LMR_FIXTURES_OUT set.
Nothing here is random.
"""
import json
import os
import random
import sys

random.seed(0)  # nothing below draws from it; seeded so that the contract holds if that changes
sys.path.insert(0, os.getcwd())

from models import BagOfWordsPolicy  # noqa: E402
from trainers import Trainer, TrainerConfig  # noqa: E402  (the reference Trainer)

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
    ("cdpo", {"beta": 0.5, "label_smoothing": 0.25, "ipo": False, "learning_rate": 0.5}),
    ("ipo", {"beta": 0.5, "label_smoothing": 0.0, "ipo": True, "learning_rate": 0.05}),
]
METRICS = ("loss", "reward_margin", "reward_accuracy")


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
    config = {**settings, "warmup_steps": 2, "total_steps": STEPS}
    policy = BagOfWordsPolicy.from_corpus(texts)
    trainer = Trainer(policy, policy.copy(), TrainerConfig(**config))
    steps = []
    for i in range(STEPS):
        metrics = trainer.train_step(BATCHES[i % len(BATCHES)])
        steps.append({key: float(metrics[key]) for key in METRICS})
    runs.append({
        "name": name,
        "config": config,
        "steps": steps,
        "final_weights": {tok: float(w) for tok, w in sorted(trainer.policy.weights.items())},
    })

write_json("fixtures/training_runs.json", {
    "about": "Written by generators/training_runs.py from the reference Trainer of pref-trainer: "
             "per run, 6 train_step calls alternating over `batches` (the metrics each returned) "
             "and the policy weights after the last one.",
    "batches": BATCHES,
    "runs": runs,
})
