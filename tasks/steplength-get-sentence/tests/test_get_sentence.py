"""Tests for get_sentence (run_inference.py): the prompt sent to the model for one question.

main() calls get_sentence(args, x, demo1) with args from the script's argument parser, x the
question wrapped as "Q: ...\\nA:" and demo1 the demonstrations text (utils.create_demo_text).
The prompt depends on args.method: the question alone with an answer trigger (zero-shot),
with the step-by-step trigger (zero-shot CoT), after the demonstrations (few-shot and
few-shot CoT), or after the demonstrations and followed by the step-by-step trigger (Auto-CoT).

get_sentence runs in the candidate process (lmr_bridge). The probes below build its arguments
there as main() does (parse_arguments, create_demo_text over the repository's demo/ files,
with prompts.py, a candidate file); the questions and the trigger phrases expected are
chosen here. The demonstrations text lives only in the workspace, so where an expected
prompt contains it, it is the text the candidate reports it passed (said at each such test);
the recorded lengths and SHA-256 digests of the reference's prompts anchor the whole prompt,
demonstrations included, to numbers this process holds.
"""
import hashlib
import json
from pathlib import Path

import pytest
from lmr_bridge import probe

from prompts import DEMOS, METHODS, wrapped_question

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = json.loads((FIXTURES / "prompts.json").read_text(encoding="utf-8"))["cases"]


# the answer trigger parse_arguments() sets for zero-shot prompts, per dataset, and the
# step-by-step trigger (the tests do not import the workspace)
ZERO_SHOT_TRIGGERS = {
    "gsm8k": "The answer (arabic numerals) is",
    "svamp": "The answer (arabic numerals) is",
    "singleeq": "The answer (arabic numerals) is",
    "strategyqa": "The answer (Yes or No) is",
    "coin_flip": "The answer (Yes or No) is",
    "last_letters": "The answer is",
}
COT_TRIGGER = "Let's think step by step."


def expected(dataset, method, x, demo):
    """The prompt layouts of the instruction, written out independently."""
    return {
        "zero_shot": x + " " + ZERO_SHOT_TRIGGERS[dataset],
        "zero_shot_cot": x + " " + COT_TRIGGER,
        "few_shot": demo + x,
        "few_shot_cot": demo + x,
        "auto_cot": demo + x + " " + COT_TRIGGER,
    }[method]


@probe
def prompt_for(dataset, method, x, demo=None):
    """In the candidate: args as parse_arguments() gives them for `dataset` and `method`, the
    demonstrations main() passes for them (or `demo`, when given), and get_sentence's prompt.
    Returns the prompt and the demonstrations text it was given."""
    from prompts import demo_text, script_args
    from run_inference import get_sentence

    args = script_args(dataset, method)
    demo1 = demo_text(args) if demo is None else demo
    return {"prompt": get_sentence(args, x, demo1), "demo": demo1}


@probe
def prompts_for(cases):
    """prompt_for for many [dataset, method, x, demo] cases at once (one round trip)."""
    return [prompt_for(*case) for case in cases]


@probe
def args_around_a_call(dataset, method, x):
    """In the candidate: vars(args) before and after get_sentence (main()'s arguments)."""
    import copy

    from prompts import demo_text, script_args
    from run_inference import get_sentence

    args = script_args(dataset, method)
    demo1 = demo_text(args)
    before = copy.deepcopy(vars(args))
    get_sentence(args, x, demo1)
    return {"before": before, "after": copy.deepcopy(vars(args))}


@probe
def prompt_for_method(dataset, parsed_method, method, x):
    """In the candidate: args parsed for `parsed_method`, then args.method set to `method` by
    hand (as api.py does), and get_sentence's prompt (or what it raises)."""
    from prompts import demo_text, script_args
    from run_inference import get_sentence

    args = script_args(dataset, parsed_method)
    demo1 = demo_text(args)
    args.method = method
    return get_sentence(args, x, demo1)


@pytest.mark.parametrize("case", CASES, ids=[f"{c['dataset']}-{c['method']}" for c in CASES])
def test_matches_recorded_prompt(case):
    # the fixture keeps the reference prompt's length and SHA-256, not its text (it holds upstream demonstrations)
    prompt = prompt_for(case["dataset"], case["method"], wrapped_question(case["dataset"]))["prompt"]
    assert isinstance(prompt, str)
    assert len(prompt) == case["length"]
    assert hashlib.sha256(prompt.encode("utf-8")).hexdigest() == case["sha256"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dataset", sorted(DEMOS))
def test_prompt_layout(dataset, method):
    # the demonstrations in the expected prompt are the text the candidate reports it passed
    x = wrapped_question(dataset)
    got = prompt_for(dataset, method, x)
    prompt, demo = got["prompt"], got["demo"]
    assert isinstance(prompt, str)
    assert isinstance(demo, str)
    assert prompt == expected(dataset, method, x, demo)


@pytest.mark.parametrize("method", ["zero_shot", "zero_shot_cot"])
def test_zero_shot_prompts_ignore_the_demonstrations(method):
    x = wrapped_question("gsm8k")
    with_demo, without = [got["prompt"] for got in prompts_for([["gsm8k", method, x, None], ["gsm8k", method, x, ""]])]
    assert with_demo == without
    assert "Anna" not in with_demo  # the first gsm8k demonstration is about Anna's books


def test_zero_shot_uses_the_dataset_answer_trigger():
    datasets = ("gsm8k", "strategyqa", "last_letters")
    prompts = dict(zip(datasets, [got["prompt"] for got in prompts_for([[d, "zero_shot", "Q: q\nA:", ""] for d in datasets])]))
    assert prompts["gsm8k"] == "Q: q\nA: The answer (arabic numerals) is"
    assert prompts["strategyqa"] == "Q: q\nA: The answer (Yes or No) is"
    assert prompts["last_letters"] == "Q: q\nA: The answer is"


def test_step_by_step_trigger_closes_zero_shot_cot_and_auto_cot():
    for method in ("zero_shot_cot", "auto_cot"):
        assert prompt_for("svamp", method, wrapped_question("svamp"))["prompt"].endswith("A: Let's think step by step.")


def test_few_shot_prompts_end_with_the_bare_question():
    # the demonstrations are the text the candidate reports it passed
    for method in ("few_shot", "few_shot_cot"):
        x = wrapped_question("coin_flip")
        got = prompt_for("coin_flip", method, x)
        prompt, demo = got["prompt"], got["demo"]
        assert prompt.startswith(demo) and prompt.endswith(x) and len(prompt) == len(demo) + len(x)


def test_args_are_left_unchanged():
    # the candidate's own report of args around the call; the prompts above are the anchor
    got = args_around_a_call("gsm8k", "auto_cot", wrapped_question("gsm8k"))
    assert got["after"] == got["before"]


def test_unknown_method_raises_value_error():
    with pytest.raises(ValueError):  # args.method set to "manual_cot" by hand, as api.py sets it
        prompt_for_method("gsm8k", "few_shot", "manual_cot", wrapped_question("gsm8k"))
