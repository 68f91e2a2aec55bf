"""Seeded stand-ins for the hidden states main.py collects, in the layout it passes to probing.

main.py runs every question of the two groups through the model and keeps, for each layer,
the last token's hidden state: one float32 array of shape (questions, hidden size) per layer,
in a list ordered by layer. Here the two groups are Gaussian clouds whose means move apart
as the layer index grows (the deeper the layer, the easier the concept), so the per-layer
scores of a probe change with depth as in the paper's figures.
"""
import argparse

import numpy as np


def make_hidden_states(seed, n_layers, n_first, n_second, dim, separation):
    """Two lists (first group, second group) of n_layers float32 arrays, (n_first, dim) and (n_second, dim)."""
    rng = np.random.default_rng(seed)
    first, second = [], []
    for layer in range(n_layers):
        shift = separation * layer / max(1, n_layers - 1)
        direction = rng.standard_normal(dim)
        direction /= np.linalg.norm(direction)
        a = rng.standard_normal((n_first, dim))
        b = rng.standard_normal((n_second, dim)) + shift * direction
        first.append(a.astype(np.float32))
        second.append(b.astype(np.float32))
    return first, second


def main_args(clf="LR"):
    """The namespace main.py's argument parser gives with its defaults, and the chosen classifier."""
    return argparse.Namespace(
        savepath="./lab_rs/", model_path="./", dataset="STSA", datapath="./dataset/stsa.binary.train",
        model="google/gemma-7b", cuda=0, quant=32, noise="non-noise", clf=clf,
    )


# Cases the generator records: (seed, layers, first group, second group, hidden size, separation, classifier).
CASES = [
    (0, 5, 40, 40, 16, 3.0, "LR"),
    (1, 4, 30, 50, 8, 2.0, "LR"),
    (2, 6, 60, 60, 32, 4.0, "LR"),
    (3, 1, 25, 25, 12, 0.0, "LR"),
    (4, 2, 40, 30, 16, 3.0, "RF"),
]
