"""Grader set-up for simpo-loss: scripts/ on sys.path.

scripts/simpo_trainer.py imports its sibling `simpo_config` as a top-level module (the
upstream runs `python scripts/run_simpo.py`, which puts scripts/ first on sys.path), so
the candidate process (the only one that imports the workspace), like the upstream's entry
point, imports from scripts/. This file is the task's tests.candidate.setup: the candidate
runs it in the workspace's root before it imports anything of it, and `lmr record` runs it
before the fixture generator. No module is replaced: trl, transformers, accelerate and
datasets are the real, pinned packages.
"""
import os
import sys

_SCRIPTS = os.path.join(os.getcwd(), "scripts")
if _SCRIPTS not in sys.path:
    sys.path.insert(0, _SCRIPTS)
