"""Matrices as get_filtered_matrix returns them, and the in-group relation (ours).

A matrix over a group option's identities (rows perceivers, columns experiencers) is a
standardized table of mean intensities: mean 0, population standard deviation 1. The ones
built here come from seeded normal draws with perceiver, experiencer and in-group effects,
then standardized, like the real ones.

In-group pairs: for 'ethnicity', perceiver and experiencer are labels of the same
ethnicity; group_mappings['ethnicity'] lists five labels of White people, then four of
Black people, three of Asian people and six of Hispanic or Latino people, in that order. For
'nationality' and 'religion', only the same identity (the diagonal).
"""
import numpy as np

SIZES = {"ethnicity": 18, "nationality": 21, "religion": 5}
ETHNIC_BLOCKS = [(0, 5), (5, 9), (9, 12), (12, 18)]


def in_group(group_option):
    n = SIZES[group_option]
    if group_option != "ethnicity":
        return np.eye(n, dtype=bool)
    label = np.empty(n, dtype=int)
    for block, (lo, hi) in enumerate(ETHNIC_BLOCKS):
        label[lo:hi] = block
    return label[:, None] == label[None, :]


def standardized(raw):
    raw = np.asarray(raw, dtype=float)
    return (raw - raw.mean()) / raw.std()


def emotion_matrix(group_option, seed, bonus=1.0):
    rng = np.random.RandomState(seed)
    n = SIZES[group_option]
    raw = 50.0 + rng.normal(0, 1.5, size=(n, 1)) + rng.normal(0, 1.5, size=(1, n)) + rng.normal(0, 1.0, size=(n, n))
    raw = np.round(raw + bonus * in_group(group_option), 2)
    return standardized(raw)
