"""The candidate's set-up (ours, not upstream code; tests.candidate.setup, formerly the tests' conftest.py).

`core/mcts.py` imports `core.game` and `core.players`, which import `core.gen_models`; that
module pulls in openai, nltk, tenacity, requests and transformers at import time to talk to
language models. The tree search under test never generates text, so instead of installing
those packages we register a small stand-in for `core.gen_models` before anything imports it
(in the candidate, before the workspace is imported; and before a recording imports the reference).
It only provides the two abstract base classes that `core.game` and `core.players` subclass
or annotate with.
"""
import sys
import types
from abc import ABC, abstractmethod


def _stand_in_gen_models():
    module = types.ModuleType("core.gen_models")
    module.__doc__ = "Stand-in for core.gen_models (the grader's candidate set-up): base classes only."

    class GenerationModel(ABC):
        @abstractmethod
        def generate(self, input_text, **gen_args):
            raise NotImplementedError

    class DialogModel(ABC):
        def __init__(self):
            self.dialog_acts = []

        @abstractmethod
        def get_utterance(self, state, action):
            raise NotImplementedError

        @abstractmethod
        def get_utterance_w_da(self, state, action):
            raise NotImplementedError

    module.GenerationModel = GenerationModel
    module.DialogModel = DialogModel
    return module


sys.modules.setdefault("core.gen_models", _stand_in_gen_models())
