"""Parametric-knowledge frames as the upstream pipeline builds them (ours, not upstream code).

`parametric_knowledge(facts, seed)` builds the frame that `generate_parametric_knowledge_dataset`
(src/data.py) returns, after scripts/main.py's filters (so the index has gaps, unless told
otherwise): the columns of paper_data/raw_pararel_with_correctly_reformatted_statements.csv
(`object` renamed `knowledge_base_object`), the columns `build_parametric_knowledge` adds,
`relation_group_id`, `relation` and the cleaned `parametric_object`. The big per-step
`log_probas` column is left out; the target reads only its first step, which the pipeline
copies into `log_probability_parametric_object_first_token`.

The "model" is a toy: a vocabulary with one token per word (" word", with its leading
space) plus "." and a few filler tokens. A parametric object is generated as its words,
then "."; so `model_output_tokens_ids` (a list of 0-d int64 torch tensors, as
`build_parametric_knowledge` returns them) starts with the token of the object's first
word, and two objects with the same first word share their first token. Each example's
first-step distribution is a log-softmax of seeded Gaussian logits in which the token the
model generated first (greedy decoding) is the most likely one, rounded to 4 decimals.
"""
import numpy as np
import pandas as pd
import torch

TEMPLATES = {
    "capital-of": "{s} is the capital city of {o}.",
    "mother-tongue": "{s} mother tongue is {o}.",  # the subject is written with its "'s"
    "part-of-continent": "{s} is a part of the continent of {o}.",
    "develop-by": "{s} was developed by {o}.",
    "is-subclass": "{s} is a subclass of {o}.",
    "official-religion": "The official religion of {s} is {o}.",
    "is-headquarter": "{s} is headquartered in {o}.",
    "play-the": "{s} plays the {o}.",
}
GROUP = {
    "capital-of": "geographic-geopolitic-language",
    "mother-tongue": "geographic-geopolitic-language",
    "part-of-continent": "geographic-geopolitic-language",
    "is-headquarter": "geographic-geopolitic-language",
    "develop-by": "corporate-products-employment",
    "is-subclass": "hierarchy",
    "official-religion": "religion",
    "play-the": "play-instrument",
}
FILLERS = ["<s>", "</s>", " the", " a", " is", " of", " and", "\n"]


def vocabulary(objects):
    words = sorted({" " + w for o in objects for w in o.split()})
    return FILLERS + ["."] + words


def parametric_knowledge(facts, seed, index="gaps", groups=None, peak=1.5, scale=2.0):
    """facts: (statement_subject, rel_lemma, statement_object, parametric_object) tuples, in row order.

    groups: relation_group_id per rel_lemma (default GROUP). index: "gaps" (sorted labels with
    gaps, as the filters leave them), "range", or a list of labels.
    """
    groups = GROUP if groups is None else groups
    rng = np.random.default_rng(seed)
    vocab = vocabulary([f[3] for f in facts])
    token = {t: i for i, t in enumerate(vocab)}
    rows = []
    for subject, rel, kb_object, parametric_object in facts:
        statement = TEMPLATES[rel].format(s=subject, o=kb_object)
        words = [" " + w for w in parametric_object.split()]
        ids = [token[w] for w in words] + [token["."]]
        logits = rng.normal(0.0, scale, len(vocab))
        logits[ids[0]] = logits.max() + peak
        log_probs = logits - np.log(np.exp(logits - logits.max()).sum()) - logits.max()
        first = [round(float(x), 4) for x in log_probs]
        rows.append({
            "subject": subject,
            "rel_lemma": rel,
            "knowledge_base_object": kb_object,
            "rel_p_id": "P%d" % (100 + sorted(TEMPLATES).index(rel)),
            "query": statement[: -len(kb_object) - 1].strip(),
            "statement": statement,
            "statement_subject": subject,
            "statement_object": kb_object,
            "statement_relation": rel.replace("-", " "),
            "model_output": "".join(w.title() for w in words) + ".",
            "confidence_score": float(np.exp(first[ids[0]]) - np.sort(np.exp(log_probs))[-2]),
            "log_likelihood_sequence": float(first[ids[0]]) * len(ids),
            "perplexity_sequence": float(np.exp(-first[ids[0]])),
            "model_output_tokens": words + ["."],
            "model_output_tokens_ids": [torch.tensor(i) for i in ids],
            "log_probability_parametric_object_first_token": first,
            "relation_group_id": groups[rel],
            "relation": rel,
            "parametric_object": parametric_object,
        })
    frame = pd.DataFrame(rows)
    if isinstance(index, str) and index == "gaps":
        frame.index = np.sort(rng.choice(4 * len(rows) + 3, size=len(rows), replace=False))
    elif not isinstance(index, str):
        frame.index = list(index)
    return frame


def first_token(frame, parametric_object):
    """The id of the first token the model generated for `parametric_object`."""
    row = frame[frame.parametric_object == parametric_object].iloc[0]
    return int(row.model_output_tokens_ids[0])
