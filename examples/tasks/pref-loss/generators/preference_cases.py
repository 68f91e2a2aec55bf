"""Writes fixtures/preference_cases.json: preference_loss of the reference on one batch of
five preference pairs, for each loss setting the tests replay (DPO, label smoothing, IPO,
several beta).

Run by `lmr record` from the root of the reference tree with $LMR_FIXTURES_OUT set; the
inputs are fixed numbers (multiples of 1/8, exact in binary), so nothing here is random.
"""
import json
import os
import random
import sys

random.seed(0)  # nothing below draws from it; seeded so that the contract holds if that changes
sys.path.insert(0, os.getcwd())

from trainers import preference_loss  # noqa: E402  (the reference, run from the tree's root)

INPUTS = {
    "policy_chosen_logps": [-12.5, -30.25, -7.0, -55.125, -3.5],
    "policy_rejected_logps": [-14.0, -28.75, -9.5, -54.0, -20.0],
    "reference_chosen_logps": [-13.0, -29.5, -7.25, -56.0, -4.0],
    "reference_rejected_logps": [-13.5, -29.0, -8.0, -53.5, -18.5],
}
SETTINGS = [
    ("dpo", 0.1, 0.0, False),
    ("dpo-beta-0.5", 0.5, 0.0, False),
    ("cdpo", 0.1, 0.2, False),
    ("cdpo-beta-2", 2.0, 0.35, False),
    ("ipo", 0.1, 0.0, True),
    ("ipo-beta-0.8", 0.8, 0.0, True),
]
COLUMNS = ("policy_chosen_logps", "policy_rejected_logps", "reference_chosen_logps", "reference_rejected_logps")


def write_json(rel, data):
    path = os.path.join(os.environ["LMR_FIXTURES_OUT"], rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # json writes floats with repr (the shortest text that reads back to the same double)
    text = json.dumps(data, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=True) + "\n"
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


cases = []
for name, beta, label_smoothing, ipo in SETTINGS:
    losses, chosen, rejected = preference_loss(
        *(INPUTS[c] for c in COLUMNS), beta, label_smoothing=label_smoothing, ipo=ipo
    )
    cases.append({
        "name": name,
        "beta": beta,
        "label_smoothing": label_smoothing,
        "ipo": ipo,
        "expected": {
            "losses": [float(x) for x in losses],
            "chosen_rewards": [float(x) for x in chosen],
            "rejected_rewards": [float(x) for x in rejected],
        },
    })

write_json("fixtures/preference_cases.json", {
    "about": "Written by generators/preference_cases.py from the reference preference_loss of "
             "pref-trainer; the inputs are shared by every case.",
    "inputs": INPUTS,
    "cases": cases,
})
