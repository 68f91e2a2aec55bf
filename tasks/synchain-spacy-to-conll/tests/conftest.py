"""Installs the grader's offline stand-in for spaCy's en_core_web_sm (tests/spacy_parses.py)
before the target module is imported: spacy.load for the model's names, and the
en_core_web_sm package, answer with real spaCy Docs from a table of hand-written parses."""
import sys
from pathlib import Path

_here = str(Path(__file__).resolve().parent)
if _here not in sys.path:
    sys.path.insert(0, _here)

import spacy_parses  # noqa: E402

spacy_parses.install()
