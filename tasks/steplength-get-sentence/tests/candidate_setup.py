"""The candidate's set-up (ours, not upstream code): a stand-in for the `attack` module.

run_inference.py starts with `from attack import rephase_sentence`, but attack.py was never
committed to the upstream repository (no commit in its history has it), so the module cannot
be imported as published. rephase_sentence appears only in commented-out lines of main();
get_sentence never calls it. This set-up (tests.candidate.setup; it used to be the tests'
conftest.py) registers an `attack` module whose rephase_sentence raises if it is ever called,
before the candidate (or a recording) imports run_inference.
"""
import sys
import types


def _rephase_sentence(*args, **kwargs):
    raise RuntimeError("attack.rephase_sentence is a stand-in in the grader: attack.py was never published upstream")


if "attack" not in sys.modules:
    attack = types.ModuleType("attack")
    attack.__doc__ = "Stand-in for the unpublished attack.py (the grader's candidate set-up)."
    attack.rephase_sentence = _rephase_sentence
    sys.modules["attack"] = attack
