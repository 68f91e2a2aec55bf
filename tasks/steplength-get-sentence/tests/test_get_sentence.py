"""Tests for get_sentence (run_inference.py): the prompt sent to the model for one question.

main() calls get_sentence(args, x, demo1) with args from the script's argument parser, x the
question wrapped as "Q: ...\\nA:" and demo1 the demonstrations text (utils.create_demo_text).
The prompt depends on args.method: the question alone with an answer trigger (zero-shot),
with the step-by-step trigger (zero-shot CoT), after the demonstrations (few-shot and
few-shot CoT), or after the demonstrations and followed by the step-by-step trigger (Auto-CoT).
"""
import copy
import hashlib
import json
from pathlib import Path

import pytest

from run_inference import get_sentence
from prompts import DEMOS, METHODS, demo_text, script_args, wrapped_question

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = json.loads((FIXTURES / "prompts.json").read_text(encoding="utf-8"))["cases"]


def expected(args, x, demo):
    """The prompt layouts of the instruction, written out independently."""
    return {
        "zero_shot": x + " " + args.direct_answer_trigger_for_zeroshot,
        "zero_shot_cot": x + " " + args.cot_trigger,
        "few_shot": demo + x,
        "few_shot_cot": demo + x,
        "auto_cot": demo + x + " " + args.cot_trigger,
    }[args.method]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['dataset']}-{c['method']}" for c in CASES])
def test_matches_recorded_prompt(case):
    # the fixture keeps the reference prompt's length and SHA-256, not its text (it holds upstream demonstrations)
    args = script_args(case["dataset"], case["method"])
    prompt = get_sentence(args, wrapped_question(case["dataset"]), demo_text(args))
    assert isinstance(prompt, str)
    assert len(prompt) == case["length"]
    assert hashlib.sha256(prompt.encode("utf-8")).hexdigest() == case["sha256"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dataset", sorted(DEMOS))
def test_prompt_layout(dataset, method):
    args = script_args(dataset, method)
    x, demo = wrapped_question(dataset), demo_text(args)
    prompt = get_sentence(args, x, demo)
    assert isinstance(prompt, str)
    assert prompt == expected(args, x, demo)


@pytest.mark.parametrize("method", ["zero_shot", "zero_shot_cot"])
def test_zero_shot_prompts_ignore_the_demonstrations(method):
    args = script_args("gsm8k", method)
    x = wrapped_question("gsm8k")
    with_demo = get_sentence(args, x, demo_text(args))
    assert with_demo == get_sentence(args, x, "")
    assert "Anna" not in with_demo  # the first gsm8k demonstration is about Anna's books


def test_zero_shot_uses_the_dataset_answer_trigger():
    prompts = {d: get_sentence(script_args(d, "zero_shot"), "Q: q\nA:", "") for d in ("gsm8k", "strategyqa", "last_letters")}
    assert prompts["gsm8k"] == "Q: q\nA: The answer (arabic numerals) is"
    assert prompts["strategyqa"] == "Q: q\nA: The answer (Yes or No) is"
    assert prompts["last_letters"] == "Q: q\nA: The answer is"


def test_step_by_step_trigger_closes_zero_shot_cot_and_auto_cot():
    for method in ("zero_shot_cot", "auto_cot"):
        args = script_args("svamp", method)
        assert get_sentence(args, wrapped_question("svamp"), demo_text(args)).endswith("A: Let's think step by step.")


def test_few_shot_prompts_end_with_the_bare_question():
    for method in ("few_shot", "few_shot_cot"):
        args = script_args("coin_flip", method)
        demo, x = demo_text(args), wrapped_question("coin_flip")
        prompt = get_sentence(args, x, demo)
        assert prompt.startswith(demo) and prompt.endswith(x) and len(prompt) == len(demo) + len(x)


def test_args_are_left_unchanged():
    args = script_args("gsm8k", "auto_cot")
    before = copy.deepcopy(vars(args))
    get_sentence(args, wrapped_question("gsm8k"), demo_text(args))
    assert vars(args) == before


def test_unknown_method_raises_value_error():
    args = script_args("gsm8k", "few_shot")
    args.method = "manual_cot"  # as api.py sets args.method by hand
    with pytest.raises(ValueError):
        get_sentence(args, wrapped_question("gsm8k"), demo_text(args))
