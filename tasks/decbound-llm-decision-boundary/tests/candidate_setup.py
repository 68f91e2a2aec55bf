"""The candidate's set-up (ours, not upstream code), run before the workspace is imported.

The code under test receives its model and tokenizer as arguments; the tests hand it the
tiny offline ones of tests/tiny_lm.py (a candidate file beside this one). The Hugging Face
libraries are told never to reach the network, and the tokenizers library not to start
worker threads. lmr record runs this file before the fixture generator too.
"""
import os
import sys
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

# tiny_lm sits beside this file (the candidate's support folder; tests/ when lmr record runs it)
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
