"""A tiny DistilBERT and its WordPiece tokenizer for the grader (ours, not upstream code).

moverscore_v2.py loads `distilbert-base-uncased` with AutoTokenizer/AutoModel.from_pretrained
when it is imported; the grader has no network and no GPU, so tests/conftest.py hands it these
instead. `make_tokenizer()` writes the small uncased WordPiece vocabulary below to a temporary
folder and loads it with DistilBertTokenizerFast (the class AutoTokenizer gives for the real
model), with a model_max_length of 24 so that the module's own truncation is exercised.
`make_model()` builds a 2-layer DistilBertModel (width 32, 4 heads, dropout off) and fills every
parameter from numpy's legacy RandomState(seed), in the sorted order of the state dict's names:
the weights are the same whatever torch's own initialisation does, so the recorded scores do not
depend on the torch version. Nothing is downloaded.
"""
import os
import tempfile

import numpy as np
import torch

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PUNCTUATION = list(".,!?;:'\"-()")
WORDS = (
    "the a an of to in on at and but with is was are were be has had have it he she they "
    "his her their this that there not no very "
    "dog cat man woman child boy girl bird horse police officer teacher student team "
    "city house park street river car bus train boat ball book letter door window "
    "bit ran walk jump play read wrote open close saw see like love ate eat "
    "big small old new happy sad quick slow red blue green black white long short "
    "first last today yesterday morning night home school game story "
    "surprising unexpected just bark loud quiet fast look call help stop start cook clean "
    "kick throw catch sing song music rain sun snow cold warm"
).split()
PIECES = ["##s", "##ed", "##ing", "##ly", "##er", "##est", "##n", "##ten", "##ful", "##ness"]

MAX_LENGTH = 24
DIM = 32


def vocabulary():
    seen, vocab = set(), []
    for token in SPECIALS + PUNCTUATION + WORDS + PIECES:
        if token not in seen:
            seen.add(token)
            vocab.append(token)
    return vocab


_FOLDER = {}


def _folder():
    if "path" not in _FOLDER:
        folder = tempfile.mkdtemp(prefix="tiny-distilbert-")
        with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(vocabulary()) + "\n")
        _FOLDER["path"] = folder
    return _FOLDER["path"]


def make_tokenizer(**kwargs):
    from transformers import DistilBertTokenizerFast

    kwargs.setdefault("do_lower_case", True)
    return DistilBertTokenizerFast(
        vocab_file=os.path.join(_folder(), "vocab.txt"), model_max_length=MAX_LENGTH, **kwargs
    )


def make_config(**kwargs):
    from transformers import DistilBertConfig

    return DistilBertConfig(
        vocab_size=len(vocabulary()),
        max_position_embeddings=MAX_LENGTH,
        dim=DIM,
        n_layers=2,
        n_heads=4,
        hidden_dim=64,
        dropout=0.0,
        attention_dropout=0.0,
        pad_token_id=0,
        **kwargs,
    )


def _fill(model, seed):
    rng = np.random.RandomState(seed)
    state = model.state_dict()
    with torch.no_grad():
        for name in sorted(state):
            tensor = state[name]
            if not tensor.is_floating_point():
                continue
            shape = tuple(tensor.shape)
            if name.endswith("LayerNorm.weight") or name.endswith("layer_norm.weight"):
                values = 1.0 + 0.1 * rng.standard_normal(shape)
            elif name.endswith(".bias"):
                values = 0.1 * rng.standard_normal(shape)
            elif "embeddings" in name:
                values = 0.5 * rng.standard_normal(shape)
            else:
                values = rng.standard_normal(shape) / np.sqrt(shape[-1])
            tensor.copy_(torch.from_numpy(values.astype(np.float32)))


def make_model(seed=0, **kwargs):
    """The tiny DistilBertModel; kwargs (output_hidden_states, ...) go to its config."""
    from transformers import DistilBertModel

    class CpuDistilBertModel(DistilBertModel):
        """Stays on the CPU when asked to move to a CUDA device (the grader has no GPU)."""

        def to(self, *args, **kwargs):
            args = tuple(a for a in args if not _is_cuda(a))
            if _is_cuda(kwargs.get("device")):
                kwargs.pop("device")
            return super().to(*args, **kwargs) if (args or kwargs) else self

    model = CpuDistilBertModel(make_config(**kwargs))
    _fill(model, seed)
    model.eval()
    return model


def _is_cuda(x):
    return (isinstance(x, str) and x.startswith("cuda")) or (isinstance(x, torch.device) and x.type == "cuda")
