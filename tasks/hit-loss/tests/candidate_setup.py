"""The candidate's set-up (ours, not upstream code), run before the workspace is imported.

The upstream package lives under `src/` (a src layout, installed with pip in the upstream's
own instructions); the candidate imports it from the working tree instead, so `src/` goes on
sys.path. Every model the tests use is a tiny random BERT that tests/tiny_hit.py writes to a
temporary folder, so the Hugging Face libraries are told never to reach the network.
lmr record runs this file before the fixture generator too.
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
# tiny_hit sits beside this file (the candidate's support folder, already on its path; tests/
# when lmr record runs it)
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
