"""Driver for `lmr record`: calls `return_entity_overlap_between_relation_groups` on tables we build.

Each table has the columns of the upstream parametric-knowledge dataset that the function
reads (statement_subject, parametric_object, relation_group_id) plus a few it does not
(rel_lemma, statement, knowledge_base_object). The facts are ParaRel-like rows written for
this task; subjects and objects recur across relation groups on purpose.
"""
import random

import pandas as pd

from src.data import return_entity_overlap_between_relation_groups

COLUMNS = ["statement_subject", "rel_lemma", "statement", "knowledge_base_object", "parametric_object", "relation_group_id"]


def table(rows, index=None):
    """rows: (subject, relation, parametric object, relation group id)."""
    records = [
        {
            "statement_subject": s,
            "rel_lemma": rel,
            "statement": f"{s} -- {rel} -- {o}.",
            "knowledge_base_object": o.title(),
            "parametric_object": o,
            "relation_group_id": g,
        }
        for s, rel, o, g in rows
    ]
    return pd.DataFrame(records, columns=COLUMNS, index=index)


FACTS = [
    # group 1: location / capital
    ("Paris", "capital-of", "france", 1),
    ("Berlin", "capital-of", "germany", 1),
    ("Rome", "capital-of", "italy", 1),
    ("Lyon", "located-in", "france", 1),
    # group 2: country of origin of companies and people
    ("Renault", "country-of-origin", "france", 2),  # object shared with group 1
    ("Fiat", "country-of-origin", "italy", 2),  # object shared with group 1
    ("Sony", "country-of-origin", "japan", 2),
    # group 3: twin cities and neighbours
    ("Paris", "twin-city", "rome", 3),  # subject shared with group 1
    ("Kyoto", "twin-city", "paris", 3),  # "paris" as an object is not the subject "Paris"
    ("Osaka", "twin-city", "shanghai", 3),
    # group 4: occupations
    ("Marie Curie", "occupation", "physicist", 4),
    ("Albert Einstein", "occupation", "physicist", 4),
    ("Enzo Ferrari", "occupation", "racing driver", 4),
    # group 5: languages
    ("Renault", "language", "french", 5),  # subject shared with group 2
    ("Sony", "language", "japanese", 5),  # subject shared with group 2
    ("paris", "language", "french", 5),  # lower-case subject: not the same as "Paris"
]

base = table(FACTS)
return_entity_overlap_between_relation_groups(base)

# relation group ids as strings, in an order of first appearance that is not sorted
return_entity_overlap_between_relation_groups(
    table([(s, rel, o, {1: "geo", 2: "orgs", 3: "cities", 4: "jobs", 5: "lang"}[g]) for s, rel, o, g in FACTS[::-1]])
)

# a shuffled, non-default index
order = [7, 2, 15, 0, 11, 4, 9, 13, 1, 6, 14, 3, 10, 12, 5, 8]
return_entity_overlap_between_relation_groups(table([FACTS[k] for k in order], index=[100 + 3 * k for k in order]))

# one group only; no overlap between groups; every example of every group overlapping
return_entity_overlap_between_relation_groups(table([f for f in FACTS if f[3] == 4]))
return_entity_overlap_between_relation_groups(
    table([("Oslo", "capital-of", "norway", 1), ("Lima", "capital-of", "peru", 1), ("Nokia", "founded-in", "1865", 2),
           ("Bach", "occupation", "composer", 3), ("Verdi", "occupation", "composer", 3)])
)
return_entity_overlap_between_relation_groups(
    table([("Paris", "capital-of", "france", 7), ("Paris", "twin-city", "rome", 3), ("Paris", "located-in", "france", 7),
           ("Paris", "language", "french", 9)])
)
# only objects shared, only subjects shared, and both for the same example (counted once)
return_entity_overlap_between_relation_groups(
    table([("A1", "r", "x", 1), ("A2", "r", "y", 1), ("A3", "r", "z", 1),
           ("B1", "r", "x", 2), ("A2", "r", "w", 2), ("A3", "r", "z", 2), ("B4", "r", "x", 2)])
)

# the empty table
return_entity_overlap_between_relation_groups(
    pd.DataFrame({c: pd.Series([], dtype="int64" if c == "relation_group_id" else "object") for c in COLUMNS})
)

# a larger seeded table: 6 groups over small pools of entities, so overlaps are frequent but not total
rng = random.Random(11)
SUBJECTS = [f"Entity {k}" for k in range(40)]
OBJECTS = [f"value {k}" for k in range(25)]
rows = []
for _ in range(150):
    g = rng.choice([3, 8, 1, 6, 2, 5])
    rows.append((rng.choice(SUBJECTS[g * 4: g * 4 + 14]), f"rel-{g}", rng.choice(OBJECTS[g * 2: g * 2 + 9]), g))
return_entity_overlap_between_relation_groups(table(rows))
