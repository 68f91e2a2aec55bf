"""What run_inference.main() hands get_sentence, built the way main() builds it.

args comes from run_inference.parse_arguments() (the script's own argument parser, which
also sets the answer triggers for the dataset); the demonstrations come from
utils.create_demo_text over one of the repository's demo files, as main() does for the
few-shot methods; the question is wrapped as main() wraps it ("Q: ...\\nA:").
"""
import os
import sys
from contextlib import contextmanager
from pathlib import Path

# dataset -> demo file of the repository (demo/), questions of our own
DEMOS = {
    "gsm8k": "demo/gsm8k_1",
    "svamp": "demo/svamp_1",
    "singleeq": "demo/singleeq_1",
    "strategyqa": "demo/strategyqa_1",
    "coin_flip": "demo/coin_flip_1",
    "last_letters": "demo/last_letters_1",
}
QUESTIONS = {
    "gsm8k": "A baker makes 24 rolls and sells 3 bags of 5 rolls. How many rolls are left?",
    "svamp": "Tom had 12 marbles. He gave 4 to Ann and found 7 more. How many marbles does he have now?",
    "singleeq": "There are 9 apples in a basket and 6 pears. How many fruits are in the basket?",
    "strategyqa": "Could a newborn kitten climb a ten metre ladder?",
    "coin_flip": "A coin is heads up. Mia flips the coin. Leo does not flip the coin. Is the coin still heads up?",
    "last_letters": "Take the last letters of each word in \"Ada Grace Linus\" and concatenate them.",
}
METHODS = ["zero_shot", "zero_shot_cot", "few_shot", "few_shot_cot", "auto_cot"]


@contextmanager
def at_root():
    """In the repository root (where run_inference.py is), as the script runs: demo paths are relative to it."""
    import run_inference

    old = os.getcwd()
    os.chdir(Path(run_inference.__file__).resolve().parent)
    try:
        yield
    finally:
        os.chdir(old)


def script_args(dataset, method):
    """parse_arguments() as `python run_inference.py --dataset D --method M --demo_path P` gives it."""
    from run_inference import parse_arguments

    argv = sys.argv
    sys.argv = ["run_inference.py", "--dataset", dataset, "--method", method, "--demo_path", DEMOS[dataset]]
    try:
        return parse_arguments()
    finally:
        sys.argv = argv


def demo_text(args):
    """The demonstrations main() passes as demo1: with rationales for the CoT methods, without for few_shot."""
    from utils import create_demo_text

    with at_root():
        return str(create_demo_text(args, cot_flag=args.method != "few_shot"))


def wrapped_question(dataset):
    return "Q: " + QUESTIONS[dataset] + "\n" + "A:"
