"""Grader-side set-up (ours, not upstream code).

DoLa's code is a modified copy of transformers 4.28.1 vendored under
`transformers-4.28.1/src/`; the tests import that copy (never an installed transformers),
so its folder goes first on sys.path. The only model the tests use is a tiny random LLaMA
that tests/tiny_llama.py builds from a fixed config and seed, so the Hugging Face
libraries are told never to reach the network.
"""
import os
import sys
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] = "1"

_SRC = str(Path.cwd() / "transformers-4.28.1" / "src")
if _SRC not in sys.path:
    sys.path.insert(0, _SRC)
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
