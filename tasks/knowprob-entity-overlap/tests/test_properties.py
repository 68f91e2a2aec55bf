"""Property tests for return_entity_overlap_between_relation_groups (src/data.py).

The result is a square table (dict of dicts) over the relation groups: entry [a][b] counts
the examples of group a whose subject is one of group b's subjects or whose parametric
object is one of group b's parametric objects. The oracle below is written from that
description with plain Python loops.

The code under test runs in the candidate process (lmr_bridge): the tables built here go
there as pandas frames and the result comes back as plain dicts; every expectation is
computed here.
"""
import copy
import random

import numpy as np
import pandas as pd
from lmr_bridge import candidate, probe

overlap = candidate.function("src.data:return_entity_overlap_between_relation_groups")

_frame_equal = pd.testing.assert_frame_equal
_integer = (int, np.integer)


def make_table(rows, index=None):
    """rows: (subject, parametric object, relation group id)."""
    return pd.DataFrame(
        {
            "statement_subject": [r[0] for r in rows],
            "rel_lemma": ["P%d" % (100 + i) for i in range(len(rows))],
            "parametric_object": [r[1] for r in rows],
            "relation_group_id": [r[2] for r in rows],
            "statement": ["%s / %s" % (r[0], r[1]) for r in rows],
        },
        index=index,
    )


def oracle(rows):
    groups = []
    for _, _, g in rows:
        if g not in groups:
            groups.append(g)
    table = {}
    for a in groups:
        table[a] = {}
        for b in groups:
            subjects_b = {s for s, _, g in rows if g == b}
            objects_b = {o for _, o, g in rows if g == b}
            table[a][b] = sum(1 for s, o, g in rows if g == a and (s in subjects_b or o in objects_b))
    return table


def as_plain(result):
    """The result with plain-int keys and values (checking every value is an integer)."""
    plain = {}
    for a, row in result.items():
        assert isinstance(row, dict)
        plain[a] = {}
        for b, v in row.items():
            assert isinstance(v, _integer) and not isinstance(v, (bool, np.bool_)), (a, b, v)
            plain[a][b] = int(v)
    return plain


ROWS = [
    ("Paris", "france", 1),
    ("Berlin", "germany", 1),
    ("Lyon", "france", 1),
    ("Renault", "france", 2),
    ("Fiat", "italy", 2),
    ("Sony", "japan", 2),
    ("Paris", "rome", 3),
    ("Kyoto", "paris", 3),
    ("Renault", "french", 4),
    ("paris", "french", 4),
    ("Sony", "japanese", 4),
]


def test_matches_a_brute_force_count():
    assert as_plain(overlap(make_table(ROWS))) == oracle(ROWS)


def test_keys_are_the_relation_groups_in_both_levels():
    result = overlap(make_table(ROWS))
    assert set(result) == {1, 2, 3, 4}
    for row in result.values():
        assert set(row) == {1, 2, 3, 4}


def test_diagonal_is_the_group_size():
    result = as_plain(overlap(make_table(ROWS)))
    sizes = {1: 3, 2: 3, 3: 2, 4: 3}
    for g, size in sizes.items():
        assert result[g][g] == size


def test_counts_are_not_symmetric():
    rows = [("X", "o1", 1), ("X", "o2", 1), ("X", "o3", 1), ("X", "o4", 2), ("Y", "o5", 2)]
    result = as_plain(overlap(make_table(rows)))
    assert result[1][2] == 3  # every example of group 1 has subject X, which group 2 has
    assert result[2][1] == 1  # only one example of group 2 has subject X


def test_subject_or_object_counts_an_example_once():
    rows = [("A", "x", 1), ("B", "y", 1), ("C", "z", 1), ("A", "x", 2), ("B", "q", 2), ("D", "z", 2)]
    result = as_plain(overlap(make_table(rows)))
    # group 1: A (subject and object shared), B (subject shared), C (object shared)
    assert result[1][2] == 3
    assert result[2][1] == 3


def test_subjects_and_objects_are_not_compared_with_each_other():
    rows = [("Paris", "france", 1), ("Lyon", "paris", 2), ("France", "europe", 3)]
    result = as_plain(overlap(make_table(rows)))
    for a in (1, 2, 3):
        for b in (1, 2, 3):
            assert result[a][b] == (1 if a == b else 0)


def test_matching_is_exact_and_case_sensitive():
    rows = [("Paris", "france", 1), ("paris", "France", 2), ("Paris ", "france.", 3)]
    result = as_plain(overlap(make_table(rows)))
    assert result[1][2] == 0 and result[2][1] == 0
    assert result[1][3] == 0 and result[3][1] == 0


def test_string_group_ids():
    rows = [(s, o, {1: "geo", 2: "orgs", 3: "cities", 4: "lang"}[g]) for s, o, g in ROWS]
    assert as_plain(overlap(make_table(rows))) == oracle(rows)


def test_index_does_not_matter():
    index = [50, 3, 17, 8, 99, 21, 64, 5, 42, 11, 30]
    assert as_plain(overlap(make_table(ROWS, index=index))) == oracle(ROWS)


def test_single_group():
    rows = [("A", "x", 7), ("B", "y", 7), ("A", "y", 7)]
    assert as_plain(overlap(make_table(rows))) == {7: {7: 3}}


def test_empty_table_gives_an_empty_dict():
    empty = make_table([])
    empty["relation_group_id"] = empty["relation_group_id"].astype("int64")
    assert overlap(empty) == {}


@probe
def table_after_counting(df):
    """In the candidate: the input table as return_entity_overlap_between_relation_groups leaves it."""
    from src.data import return_entity_overlap_between_relation_groups

    return_entity_overlap_between_relation_groups(df)
    return df


def test_input_is_not_modified():
    df = make_table(ROWS)
    before = copy.deepcopy(df)
    _frame_equal(table_after_counting(df), before)


def test_random_tables_match_the_brute_force_count():
    rng = random.Random(3)
    for _ in range(5):
        n_groups = rng.randint(2, 6)
        rows = [
            ("s%d" % rng.randrange(12), "o%d" % rng.randrange(10), rng.randrange(n_groups) * 10 + 3)
            for _ in range(rng.randint(1, 40))
        ]
        assert as_plain(overlap(make_table(rows))) == oracle(rows)
