"""The candidate's set-up: installs the grader's offline stand-in for spaCy's en_core_web_sm
(tests/spacy_parses.py) before the target module is imported: spacy.load for the model's
names, and the en_core_web_sm package, answer with real spaCy Docs from a table of
hand-written parses. It runs in the candidate process (tests.candidate.setup) and before the
driver when `lmr record` records the fixtures; the tests' own process never imports spaCy."""
import sys
from pathlib import Path

# spaCy's thinc imports torch whenever it is installed; this task's environment declares no
# torch (its image has none) and nothing here needs it, but a host venv over Debian's Python
# sees the system's. Hidden, the tests and the recording (calls.json names the libraries
# loaded and seeded) see the same modules on every backend, and spare the import.
sys.modules.setdefault("torch", None)

# spacy_parses sits beside this file (the candidate's support folder, already on its path;
# tests/ when lmr record runs it)
_here = str(Path(__file__).resolve().parent)
if _here not in sys.path:
    sys.path.insert(0, _here)

import spacy_parses  # noqa: E402

spacy_parses.install()
