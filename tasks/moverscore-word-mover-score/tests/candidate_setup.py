"""The candidate's set-up (ours, not upstream code), run before moverscore_v2 is imported.

It runs in the candidate process (tests.candidate.setup), where the code under test is
imported, and before the generator when `lmr record` regenerates the fixtures; the tests'
own process never imports moverscore_v2 and builds its tokenizer and model from
tests/tiny_distilbert.py directly.

moverscore_v2.py, when imported, loads `distilbert-base-uncased` (AutoTokenizer and AutoModel
.from_pretrained of a hub name) and moves the model to 'cuda'. The grader has neither network
nor GPU, so:

- AutoTokenizer.from_pretrained / AutoModel.from_pretrained answer the name
  'distilbert-base-uncased' with the tiny tokenizer and model of tests/tiny_distilbert.py (any
  other name is an error), and the model stays on the CPU when moved to a CUDA device;
- MOVERSCORE_MODEL is unset, so the module takes its default model name (and bert_encode its
  DistilBERT branch);
- numpy.float, an alias of the builtin float that numpy 1.24 removed and that the module's
  upstream code still names, is given back as that alias.

Nothing else of the module or of transformers is changed.
"""
import os
import sys
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ.pop("MOVERSCORE_MODEL", None)

# tiny_distilbert and moverscore_cases sit beside this file (the candidate's support folder,
# already on its path; tests/ when lmr record runs it)
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import numpy  # noqa: E402

if "float" not in numpy.__dict__:
    numpy.float = float

import transformers  # noqa: E402

import tiny_distilbert  # noqa: E402

MODEL_NAME = "distilbert-base-uncased"


def _tokenizer_from_pretrained(cls, name, *args, **kwargs):
    if name != MODEL_NAME:
        raise OSError(f"the grader has no network: only {MODEL_NAME!r} is available (a tiny stand-in), not {name!r}")
    return tiny_distilbert.make_tokenizer(**kwargs)


def _model_from_pretrained(cls, name, *args, **kwargs):
    if name != MODEL_NAME:
        raise OSError(f"the grader has no network: only {MODEL_NAME!r} is available (a tiny stand-in), not {name!r}")
    return tiny_distilbert.make_model(**kwargs)


transformers.AutoTokenizer.from_pretrained = classmethod(_tokenizer_from_pretrained)
transformers.AutoModel.from_pretrained = classmethod(_model_from_pretrained)
