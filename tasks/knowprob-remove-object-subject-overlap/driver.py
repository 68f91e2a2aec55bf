"""Driver for `lmr record`: calls `remove_object_subject_overlap` on parametric-knowledge frames we build.

The frames have the columns the upstream pipeline produces before this filter
(statement_subject, rel_lemma, statement, knowledge_base_object, parametric_object,
relation_group_id, log_probability_parametric_object_first_token); the values are
ParaRel-like facts written for this task. Subjects keep their casing, parametric objects
are lower-cased model outputs, as in the upstream pipeline.

Only calls that keep at least one row are recorded: a replay compares the index too, and
the instruction leaves the index of an empty result free (any empty frame with the
input's columns and dtypes is right), so empty results are checked by
tests/test_properties.py instead.
"""
import random

import pandas as pd

from src.data import remove_object_subject_overlap

COLUMNS = [
    "statement_subject",
    "rel_lemma",
    "statement",
    "knowledge_base_object",
    "parametric_object",
    "relation_group_id",
    "log_probability_parametric_object_first_token",
]

# (subject, relation, knowledge-base object, parametric object produced by the model)
FACTS = [
    ("Canada", "capital", "Ottawa", "canadian"),  # cased Jaro-Winkler 0.82
    ("Rome", "country", "Italy", "roma"),  # cased 0.67, lower-cased 0.88
    ("Munich", "country", "Germany", "munchen"),  # cased 0.75, lower-cased 0.89
    ("Toyota Corolla", "manufacturer", "Toyota", "toyota"),  # object inside the subject
    ("Nokia", "country", "Finland", "finland"),
    ("Barack Obama", "born-in", "Honolulu", "honolulu"),
    ("Apple Watch", "manufacturer", "Apple", "apple"),  # object inside the subject
    ("Dublin", "twin-city", "Dubai", "dubai"),  # cased 0.70
    ("Martin", "sibling", "Martina", "martina"),  # cased 0.85
    ("Berlin", "capital-of", "Germany", "berlin"),  # same word, other case
    ("Harry Potter", "author", "J. K. Rowling", "potter"),  # object inside the subject
    ("Sony", "country", "Japan", "japan"),
    ("Lisbon", "native-name", "Lisboa", "lisboa"),  # cased 0.78, lower-cased 0.93
    ("Warsaw", "native-name", "Warszawa", "warszawa"),  # cased 0.82
    ("Milan", "native-name", "Milano", "milano"),  # cased 0.82
    ("Jean", "full-name", "Jean Dupont", "jean dupont"),  # subject inside the object
    ("Kyoto", "country", "Japan", "tokyo"),
    ("Florence", "native-name", "Firenze", "firenze"),  # cased 0.69, lower-cased 0.80
    ("Stefan", "variant", "Stephan", "STEPHAN"),  # upper-case output: cased 0.44
    ("Cairo", "native-name", "Al-Qahira", "al-qahira"),
    ("Martha", "variant", "Marhta", "marhta"),  # transposition: cased 0.82
    ("iPhone", "manufacturer", "Apple", "IPHONE"),  # same word, other case
]

RELATION_GROUP = {"capital": 1, "country": 2, "manufacturer": 3, "born-in": 4, "twin-city": 5, "sibling": 6,
                  "capital-of": 1, "author": 7, "native-name": 8, "full-name": 9, "variant": 9}


def frame(facts, index=None):
    rows = []
    for i, (subject, rel, kb_object, parametric_object) in enumerate(facts):
        rows.append({
            "statement_subject": subject,
            "rel_lemma": rel,
            "statement": f"The {rel} of {subject} is {kb_object}.",
            "knowledge_base_object": kb_object,
            "parametric_object": parametric_object,
            "relation_group_id": RELATION_GROUP[rel],
            "log_probability_parametric_object_first_token": round(-0.37 * (i + 1), 4),
        })
    return pd.DataFrame(rows, columns=COLUMNS, index=index)


base = frame(FACTS)
remove_object_subject_overlap(base)  # the default threshold, 0.8
for ratio in (0.7, 0.85, 0.9, 0.95, 1.0):
    remove_object_subject_overlap(base, string_similarity_ratio=ratio)
remove_object_subject_overlap(base, 0.75)  # threshold passed positionally

# a non-default index (labels and order must survive the filter)
remove_object_subject_overlap(frame(FACTS[::-1], index=[f"row-{k}" for k in range(len(FACTS))]))
remove_object_subject_overlap(frame(FACTS[3:9], index=[40, 7, 13, 2, 99, 5]), string_similarity_ratio=0.8)

# one row kept; no row removed; one row of four kept
remove_object_subject_overlap(frame([FACTS[5]]))
remove_object_subject_overlap(frame([FACTS[4], FACTS[5], FACTS[11], FACTS[16]]))
remove_object_subject_overlap(frame([FACTS[3], FACTS[6], FACTS[16], FACTS[21]], index=[8, 3, 1, 6]))

# a larger seeded frame: objects that are case variants, pieces, near-misspellings or unrelated words
rng = random.Random(5)
FIRST = ["Anna", "Bruno", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hiroshi", "Ines", "Jonas", "Kamala", "Luca"]
LAST = ["Moreau", "Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Sato", "Tanaka", "Ulrich", "Varga", "Weber"]
PLACES = ["lyon", "porto", "krakow", "osaka", "lagos", "quito", "tallinn", "oslo", "perth", "delhi", "bergen"]


def typo(word):
    k = rng.randrange(len(word))
    return word[:k] + rng.choice("aeiourstn") + word[k + 1:]


big = []
for _ in range(120):
    subject = f"{rng.choice(FIRST)} {rng.choice(LAST)}" if rng.random() < 0.7 else rng.choice(FIRST)
    kind = rng.randrange(6)
    if kind == 0:
        obj = subject.lower()
    elif kind == 1:
        obj = rng.choice(subject.split()).lower()
    elif kind == 2:
        obj = typo(subject.lower())
    elif kind == 3:
        obj = typo(subject)
    elif kind == 4:
        obj = subject.upper()
    else:
        obj = rng.choice(PLACES)
    big.append((subject, rng.choice(sorted(RELATION_GROUP)), rng.choice(PLACES).title(), obj))
big_frame = frame(big)
for ratio in (0.6, 0.8, 0.9):
    remove_object_subject_overlap(big_frame, string_similarity_ratio=ratio)
