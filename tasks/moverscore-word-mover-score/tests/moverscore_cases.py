"""Inputs shared by the generator and the tests (ours, not upstream code).

`idf_dict(spec, tokenizer)` builds the idf dictionary a caller of word_mover_score passes, from
a JSON-able spec:
- {"kind": "uniform", "value": v}: every token id weighs v (the README's defaultdict(lambda: 1.));
- {"kind": "corpus", "texts": [...]}: the corpus idf of the README's get_idf_dict(texts),
  log((N + 1) / (c + 1)) for a token id in c of the N texts and log(N + 1) for an unseen one,
  where a text counts its [CLS] and [SEP] too (so they weigh 0); computed here without
  get_idf_dict's process pool;
- {"kind": "by_id", "offset": o, "scale": s, "mod": m}: id -> o + s * (id % m), a table that
  gives different tokens different weights.

`idf_table(entry, tokenizer)` is what the tests send instead of a dictionary (a defaultdict
with a lambda as default factory cannot travel to the candidate process): {"spec": SPEC,
"set": [[token ids, weight], ...]} builds idf_dict(SPEC) and then gives those ids that weight.
The tests build the same table on their side for their own expected values.
"""
from collections import Counter, defaultdict
from math import log


def token_ids(text, tokenizer):
    tokens = tokenizer.tokenize(text)[: tokenizer.model_max_length - 2]
    return tokenizer.convert_tokens_to_ids(["[CLS]"] + tokens + ["[SEP]"])


def idf_dict(spec, tokenizer):
    kind = spec["kind"]
    if kind == "uniform":
        value = float(spec["value"])
        return defaultdict(lambda: value)
    if kind == "corpus":
        texts = spec["texts"]
        counts = Counter()
        for text in texts:
            counts.update(set(token_ids(text, tokenizer)))
        n = len(texts)
        table = defaultdict(lambda: log((n + 1) / 1))
        table.update({i: log((n + 1) / (c + 1)) for i, c in counts.items()})
        return table
    if kind == "by_id":
        offset, scale, mod = float(spec["offset"]), float(spec["scale"]), int(spec["mod"])
        table = defaultdict(float)
        for i in range(len(tokenizer.get_vocab())):
            table[i] = offset + scale * (i % mod)
        return table
    raise ValueError(f"unknown idf spec {spec!r}")


def idf_table(entry, tokenizer):
    table = idf_dict(entry["spec"], tokenizer)
    for ids, weight in entry.get("set", []):
        changed = defaultdict(table.default_factory)
        changed.update(table)
        for i in ids:
            changed[i] = float(weight)
        table = changed
    return table
