"""An offline stand-in for an `openai.OpenAI` client's embeddings endpoint (ours).

`FakeOpenAI().embeddings.create(input=..., model=..., dimensions=...)` answers like the
real client (openai >= 1.0): keyword arguments only, `input` one string or a list of
strings, and a response whose `.data` holds one item per input, in order, each with
`.embedding` (a list of floats) and `.index`. Like OpenAI's text-embedding-3 models, a
text has one full 1536-dimensional unit vector, and `dimensions=d` returns its first d
components scaled back to unit length. Unknown models are refused, as the API refuses them.

The vectors are deterministic and offline: hashed character trigrams of the exact text
(case, spaces and newlines count, as they do for a real embedding model), so texts that
share pieces point in similar directions. Every call is kept in `.calls`.
"""
import hashlib
import math
from types import SimpleNamespace

import numpy as np

FULL_DIMENSIONS = {"text-embedding-3-small": 1536}


class ModelNotFound(Exception):
    pass


def full_embedding(text, size):
    """Unit vector of `size` components: sum of hashed signed trigram vectors (and a text-specific one)."""
    padded = f"\x02{text}\x03"
    grams = [padded[i:i + 3] for i in range(max(1, len(padded) - 2))] + ["\x00whole:" + text]
    vec = np.zeros(size)
    for g in grams:
        seed = int.from_bytes(hashlib.sha256(g.encode("utf-8")).digest()[:8], "little")
        vec += np.random.RandomState(seed % (2**32)).standard_normal(size)
    return vec / np.linalg.norm(vec)


def shortened(vec, dimensions):
    part = vec[:dimensions]
    return part / math.sqrt(float(part @ part))


class _Embeddings:
    def __init__(self, calls):
        self._calls = calls

    def create(self, *, input, model, dimensions=None, encoding_format=None, user=None, timeout=None):
        if model not in FULL_DIMENSIONS:
            raise ModelNotFound(f"The model `{model}` does not exist or you do not have access to it.")
        texts = [input] if isinstance(input, str) else list(input)
        if not texts or not all(isinstance(t, str) for t in texts):
            raise TypeError("input must be a string or a non-empty list of strings")
        size = FULL_DIMENSIONS[model]
        if dimensions is not None and not (isinstance(dimensions, int) and 1 <= dimensions <= size):
            raise ValueError(f"dimensions must be an integer from 1 to {size}")
        self._calls.append({"input": list(texts), "model": model, "dimensions": dimensions})
        data = []
        for i, t in enumerate(texts):
            vec = full_embedding(t, size)
            if dimensions is not None:
                vec = shortened(vec, dimensions)
            data.append(SimpleNamespace(object="embedding", index=i, embedding=[float(x) for x in vec]))
        return SimpleNamespace(object="list", data=data, model=model, usage=SimpleNamespace(prompt_tokens=0, total_tokens=0))


class FakeOpenAI:
    def __init__(self, api_key=""):
        self.calls = []
        self.embeddings = _Embeddings(self.calls)


def embed(text, dimensions=100):
    """What the fake returns for one text with model text-embedding-3-small (for oracles)."""
    return np.array(shortened(full_embedding(text, FULL_DIMENSIONS["text-embedding-3-small"]), dimensions))
