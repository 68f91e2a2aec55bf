"""Writes fixtures/prompts.json: the reference get_sentence's prompt for every dataset and method.

The prompts hold the repository's demonstrations, so the fixture keeps only each prompt's
length and SHA-256 (no upstream text is copied into the task).

Run by `lmr record` from the root of the reference tree, after tests/conftest.py has installed
its stand-in for the unpublished attack module; writes $LMR_FIXTURES_OUT/fixtures/prompts.json.
"""
import hashlib
import json
import os
import random
import sys
from pathlib import Path

random.seed(0)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from prompts import DEMOS, METHODS, demo_text, script_args, wrapped_question  # noqa: E402

from run_inference import get_sentence  # noqa: E402

cases = []
for dataset in DEMOS:
    for method in METHODS:
        args = script_args(dataset, method)
        prompt = get_sentence(args, wrapped_question(dataset), demo_text(args))
        cases.append({"dataset": dataset, "method": method, "length": len(prompt), "sha256": hashlib.sha256(prompt.encode("utf-8")).hexdigest()})

out = os.path.join(os.environ["LMR_FIXTURES_OUT"], "fixtures", "prompts.json")
os.makedirs(os.path.dirname(out), exist_ok=True)
with open(out, "w", encoding="utf-8") as f:
    f.write(json.dumps({"cases": cases}, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
