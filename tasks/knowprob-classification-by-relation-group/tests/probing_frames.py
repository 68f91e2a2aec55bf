"""Probing results as the upstream pipeline hands them to the classifier (ours, not upstream code).

`probing_results(...)` builds the frame that `prompt_model_and_store_activations`
(src/prompt_model.py) returns, after scripts/main.py has dropped the ND rows: one row per
counter-knowledge prompt with the columns that function writes (knowledge_source is "CK" or
"PK", relation_group_id, ...) and one column per stored module ("mlp", "mlp-l1", "mhsa").
A module cell is what the hook in src/store_activations.py builds with vertical=True: a dict
over the four token positions ("first", "object", "subject_query", "relation_query"); a
stored position holds one entry per layer, each a one-item list with a float32 vector of the
module's width; positions that were not stored are empty lists. By default the index keeps
the gaps that the ND filter leaves.

The activations are seeded Gaussian vectors: each relation group has its own offset per
position and layer, and the label moves a vector by +/- strength/2 along a fixed unit
direction per layer, so that strength 0 is chance level and large strengths separate PK
from CK. Everything is drawn from numpy.random.default_rng(seed), so a spec gives the same
frame on every machine.
"""
import numpy as np
import pandas as pd

POSITIONS = ("first", "object", "subject_query", "relation_query")
WIDTH = {"mlp": 12, "mlp-l1": 48, "mhsa": 12}
FLAG = {"mlp": "include_mlps", "mlp-l1": "include_mlps_l1", "mhsa": "include_mhsa"}
OBJECTS = ["france", "japan", "italy", "microsoft", "nbc", "islam", "violin", "goalkeeper", "physics", "oslo"]


def probing_results(seed, groups, module, n_layers, signal, stored=("relation_query",), index_gaps=True,
                    interleave=False, flip=(), width=None):
    """A probing-results frame.

    groups: [[relation_group_id, number of CK rows, number of PK rows], ...] in row order.
    signal: {position: [strength per layer]} for the stored positions (missing: no signal).
    flip: relation group ids whose PK/CK direction is reversed.
    """
    rng = np.random.default_rng(seed)
    width = width or WIDTH[module]
    direction = rng.standard_normal((n_layers, width))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    rows = []
    for g, n_ck, n_pk in groups:
        offset = 0.6 * rng.standard_normal((len(POSITIONS), n_layers, width))
        labels = np.array(["CK"] * n_ck + ["PK"] * n_pk)
        rng.shuffle(labels)
        for i, source in enumerate(labels):
            sign = (1.0 if source == "PK" else -1.0) * (-1.0 if g in flip else 1.0)
            cell = {p: [] for p in POSITIONS}
            for p in stored:
                k = POSITIONS.index(p)
                strength = signal.get(p, [0.0] * n_layers)
                cell[p] = [
                    [(offset[k, l] + rng.standard_normal(width) + sign * 0.5 * strength[l] * direction[l]).astype(np.float32)]
                    for l in range(n_layers)
                ]
            parametric = OBJECTS[(3 * i + len(rows)) % len(OBJECTS)]
            counter = OBJECTS[(7 * i + 1) % len(OBJECTS)]
            rows.append({
                "knowledge_source": str(source),
                "output_txt": (parametric if source == "PK" else counter) + ". The",
                "output_object": parametric if source == "PK" else counter,
                "counter_knowledge_object": counter,
                "parametric_knowledge_object": parametric,
                "statement_query": "Subject %s-%d relates to" % (g, i),
                "statement_subject": "Subject %s-%d" % (g, i),
                "rel_lemma": "rel-%s-%d" % (g, i % 3),
                "relation_group_id": g,
                module: cell,
            })
    if interleave:
        rows = [rows[k] for k in rng.permutation(len(rows))]
    frame = pd.DataFrame(rows)
    if index_gaps:
        frame.index = np.sort(rng.choice(3 * len(rows), size=len(rows), replace=False))
    return frame


def flags(module):
    """The include_* keyword arguments that select `module` alone."""
    return {name: name == FLAG[module] for name in FLAG.values()}
