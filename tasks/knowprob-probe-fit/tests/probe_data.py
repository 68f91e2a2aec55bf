"""Inputs for the knowledge-source probe, laid out as the upstream pipeline makes them (ours, not upstream code).

Two builders, both seeded with numpy.random.default_rng so that a spec gives the same data on
every machine:

- `activation_frame(...)`: the probing-results frame that `prompt_model_and_store_activations`
  (src/prompt_model.py) returns after scripts/main.py drops the ND rows, as the classifier's
  helpers receive it: one row per prompt, `knowledge_source` "CK" or "PK", `relation_group_id`,
  a few text columns, and one column per stored module ("mlp" = MLP-L2, "mlp-l1" = MLP-L1,
  "mhsa"). A module cell is what the hook of src/store_activations.py builds with
  vertical=True: a dict over the four token positions; a stored position holds one entry per
  layer, each a one-item list with the module's float32 vector; a position that was not stored
  is an empty list.
- `probe_arrays(...)`: features and targets for one training set and one test set directly, as
  (rows, layers, 1, width) float32 arrays and 0/1 targets (CK = 0, PK = 1).

Activations are Gaussian noise around an offset, moved by +/- strength/2 along a fixed unit
direction per layer depending on the label: strength 0 gives no signal, a large strength
separates the two sources.
"""
import numpy as np
import pandas as pd

POSITIONS = ("first", "object", "subject_query", "relation_query")
WIDTH = {"mlp": 12, "mlp-l1": 48, "mhsa": 12}
FLAG = {"mlp": "include_mlps", "mlp-l1": "include_mlps_l1", "mhsa": "include_mhsa"}
ENCODER = {"CK": 0, "PK": 1}


def flags(*modules):
    """The include_* keyword arguments that select exactly `modules`."""
    return {flag: module in modules for module, flag in FLAG.items()}


def activation_frame(seed, groups, modules, n_layers, signal=None, stored=("relation_query",), constant=(),
                     index="gaps", interleave=False):
    """A probing-results frame.

    groups: [[relation_group_id, number of CK rows, number of PK rows], ...] in row order.
    modules: {module column: width}; drawn in sorted order of the names, so that a spec read back
    from JSON (sorted keys) gives the same frame.
    signal: {(module, position): [strength per layer]}; missing means no signal.
    constant: (module, position) pairs whose vectors are the same in every row (per layer).
    index: "gaps" (sorted labels with holes, as the ND filter leaves them), "range" or "shuffled".
    """
    rng = np.random.default_rng(seed)
    modules = dict(sorted(modules.items()))
    signal = {tuple(k.split("@")) if isinstance(k, str) else tuple(k): v for k, v in (signal or {}).items()}
    constant = {tuple(c) for c in constant}
    direction = {}
    fixed = {}
    for module, width in modules.items():
        d = rng.standard_normal((n_layers, width))
        direction[module] = d / np.linalg.norm(d, axis=1, keepdims=True)
        for p in stored:
            if (module, p) in constant:
                fixed[module, p] = rng.standard_normal((n_layers, width)).astype(np.float32)
    rows = []
    for g, n_ck, n_pk in groups:
        offset = {m: 0.5 * rng.standard_normal((len(POSITIONS), n_layers, w)) for m, w in modules.items()}
        labels = np.array(["CK"] * n_ck + ["PK"] * n_pk)
        rng.shuffle(labels)
        for i, source in enumerate(labels):
            sign = 1.0 if source == "PK" else -1.0
            row = {
                "knowledge_source": str(source),
                "output_object": "object-%d" % (len(rows) % 7),
                "statement_subject": "Subject %s-%d" % (g, i),
                "rel_lemma": "rel-%s-%d" % (g, i % 3),
                "relation_group_id": g,
            }
            for module, width in modules.items():
                cell = {p: [] for p in POSITIONS}
                for p in stored:
                    if (module, p) in constant:
                        cell[p] = [[fixed[module, p][l].copy()] for l in range(n_layers)]
                        continue
                    k = POSITIONS.index(p)
                    strength = signal.get((module, p), [0.0] * n_layers)
                    cell[p] = [
                        [(offset[module][k, l] + rng.standard_normal(width)
                          + sign * 0.5 * strength[l] * direction[module][l]).astype(np.float32)]
                        for l in range(n_layers)
                    ]
                row[module] = cell
            rows.append(row)
    if interleave:
        rows = [rows[k] for k in rng.permutation(len(rows))]
    frame = pd.DataFrame(rows)
    if index == "gaps":
        frame.index = np.sort(rng.choice(3 * len(rows) + 1, size=len(rows), replace=False))
    elif index == "shuffled":
        frame.index = rng.permutation(len(rows)) + 100
    return frame


def probe_arrays(seed, train, test, n_layers, width, signal, flip_test=False, constant_layers=(), test_shift=0.0):
    """(train_x, train_y, test_x, test_y) for one probe.

    train, test: (number of CK rows, number of PK rows); rows come shuffled.
    signal: strength per layer; constant_layers: layers whose vector is the same in every row
    (of both sets); flip_test: the PK/CK direction is reversed in the test set; test_shift: an
    offset added to every test vector (another relation group).
    """
    rng = np.random.default_rng(seed)
    direction = rng.standard_normal((n_layers, width))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    fixed = rng.standard_normal((n_layers, width))
    base = 0.3 * rng.standard_normal((n_layers, width))

    def block(counts, flip, shift):
        y = np.array([0] * counts[0] + [1] * counts[1], dtype=np.int64)
        rng.shuffle(y)
        x = np.empty((len(y), n_layers, 1, width), dtype=np.float32)
        for i, label in enumerate(y):
            sign = (1.0 if label == 1 else -1.0) * (-1.0 if flip else 1.0)
            for l in range(n_layers):
                if l in constant_layers:
                    x[i, l, 0] = fixed[l]
                else:
                    x[i, l, 0] = base[l] + shift + rng.standard_normal(width) + sign * 0.5 * signal[l] * direction[l]
        return x, y

    train_x, train_y = block(train, False, 0.0)
    test_x, test_y = block(test, flip_test, test_shift)
    return train_x, train_y, test_x, test_y
