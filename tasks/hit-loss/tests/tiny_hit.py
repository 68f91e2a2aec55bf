"""A tiny, randomly initialised Hierarchy Transformer for the grader (ours, not upstream code).

`make_model()` writes a WordPiece vocabulary, a BERT tokenizer and a 2-layer BERT with
16-dimensional outputs (seeded, dropout off so every forward pass is deterministic) to a
temporary folder, then loads it with `HierarchyTransformer.from_pretrained`, the way the
upstream's training script loads a pre-trained encoder: a mean-pooling sentence encoder whose
outputs lie in a Poincaré ball of curvature 1/16 (radius 4). Nothing is downloaded.
"""
import os
import tempfile

import torch

WORDS = (
    "entity object animal mammal dog cat horse bird eagle plant tree oak pine fruit apple berry "
    "grape device computer laptop phone tablet vehicle car truck bike boat food bread cheese"
).split()
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
EXTRA = ["personal", "small", "big", "wild", "red", "##s", "##er", "-", ","]

# (child, parent, negative parent) triplets, as in the HiT triplet datasets
TRIPLETS = [
    ("dog", "mammal", "fruit"),
    ("cat", "mammal", "vehicle"),
    ("eagle", "bird", "tree"),
    ("oak", "tree", "device"),
    ("apple", "fruit", "animal"),
    ("personal computer", "computer", "berry"),
    ("red berry", "berry", "truck"),
    ("laptop", "computer", "horse"),
    ("wild horse", "horse", "bread"),
    ("small boat", "vehicle", "cheese"),
]

_CACHE = {}


def model_dir(seed=0):
    """A folder holding the tiny BERT and its tokenizer (made once per seed and process)."""
    if seed in _CACHE:
        return _CACHE[seed]
    from transformers import BertConfig, BertModel, BertTokenizer

    folder = tempfile.mkdtemp(prefix="tiny-hit-")
    vocab = os.path.join(folder, "vocab.txt")
    with open(vocab, "w", encoding="utf-8") as f:
        f.write("\n".join(SPECIALS + WORDS + EXTRA) + "\n")
    tokenizer = BertTokenizer(vocab, do_lower_case=True, model_max_length=32)
    tokenizer.save_pretrained(folder)
    config = BertConfig(
        vocab_size=len(tokenizer.vocab),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=40,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        BertModel(config).save_pretrained(folder)
    _CACHE[seed] = folder
    return folder


def make_model(seed=0):
    from hierarchy_transformers import HierarchyTransformer

    return HierarchyTransformer.from_pretrained(model_dir(seed))


def features(model, triplets=TRIPLETS):
    """The three tokenised columns (child, parent, negative) a SentenceTransformerTrainer passes."""
    columns = list(zip(*triplets))
    return [model.tokenize(list(column)) for column in columns]
