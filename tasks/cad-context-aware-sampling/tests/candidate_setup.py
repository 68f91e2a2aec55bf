"""Grader-side set-up of the candidate process (ours, not upstream code).

`cad.py` is made from the upstream demo notebook, whose cells load `google/gemma-2-2b-it`
from the Hugging Face Hub at import time (`AutoTokenizer.from_pretrained`,
`AutoModelForCausalLM.from_pretrained`), move it to a device and tokenise an example.
Tests run offline and never download a model, so before `cad` is imported (only in the
candidate process, where the code under test runs) we point both `from_pretrained` calls at
tiny, randomly initialised stand-ins. The function under test receives its model and
tokenizer as arguments; the module-level model is never used.
"""
import os
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402


class ToyTokenizer:
    """Enough of a tokenizer for the notebook's module-level code: one id per character."""

    def __init__(self, vocab_size=48, eos_token_id=1):
        self.vocab_size = vocab_size
        self.eos_token_id = eos_token_id

    def __call__(self, text, return_tensors=None):
        ids = [2 + (ord(ch) % (self.vocab_size - 2)) for ch in text]
        return SimpleNamespace(input_ids=torch.tensor([ids], dtype=torch.long))

    def decode(self, ids, skip_special_tokens=False):
        return " ".join(str(int(i)) for i in ids)


def _tiny_model(*_args, **_kwargs):
    config = transformers.GPT2Config(vocab_size=48, n_positions=64, n_embd=16, n_layer=1, n_head=2)
    return transformers.GPT2LMHeadModel(config).eval()


def _tiny_tokenizer(*_args, **_kwargs):
    return ToyTokenizer()


transformers.AutoTokenizer.from_pretrained = staticmethod(_tiny_tokenizer)
transformers.AutoModelForCausalLM.from_pretrained = staticmethod(_tiny_model)
