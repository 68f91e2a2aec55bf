"""Grader-side set-up (ours, not upstream code).

The upstream package lives under `src/` (a src layout, installed with pip in the upstream's
own instructions); the tests import it from the working tree instead, so `src/` goes on
sys.path. Every model the tests use is a tiny random BERT that tests/tiny_hit.py writes to a
temporary folder, so the Hugging Face libraries are told never to reach the network.
"""
import os
import sys
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

_SRC = str(Path.cwd() / "src")
if _SRC not in sys.path:
    sys.path.insert(0, _SRC)
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
