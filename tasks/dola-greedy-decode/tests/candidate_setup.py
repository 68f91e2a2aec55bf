"""Grader-side set-up of the candidate process (ours, not upstream code).

DoLa's code is a modified copy of transformers 4.28.1 vendored under
`transformers-4.28.1/src/`; the code under test is that copy (never an installed
transformers), so its folder goes first on sys.path before anything imports it. The only
model the tests use is a tiny random LLaMA that tiny_llama.py (a candidate file beside this
one) builds from a fixed config and seed, so the Hugging Face libraries are told never to
reach the network. The tests themselves run in another process, which never imports the
vendored transformers: they reach it through lmr_bridge's probes.
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
