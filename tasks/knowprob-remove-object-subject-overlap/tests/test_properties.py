"""Property tests for remove_object_subject_overlap (src/data.py).

The filter drops the examples whose subject and parametric object overlap: one contains
the other once both are lower-cased, or their (cased) Jaro-Winkler similarity reaches the
threshold. These tests check that rule with an oracle written here from that description,
plus what a row filter must keep: the index, the order, the columns and the input, and
the columns (with their dtypes) when no row is left.

The code under test runs in the candidate process (lmr_bridge): the frames built here go
there as pandas values and the result comes back as one; every expectation is computed
here, from the frames this file builds.
"""
import copy

import pandas as pd
import pytest
from lmr_bridge import candidate, probe
from rapidfuzz.distance import JaroWinkler

remove_object_subject_overlap = candidate.function("src.data:remove_object_subject_overlap")

_jw = JaroWinkler.normalized_similarity
_frame_equal = pd.testing.assert_frame_equal

COLUMNS = [
    "statement_subject",
    "rel_lemma",
    "statement",
    "knowledge_base_object",
    "parametric_object",
    "relation_group_id",
    "log_probability_parametric_object_first_token",
]


def make_frame(pairs, index=None, knowledge_base_objects=None):
    """A parametric-knowledge table as the pipeline builds it: one row per (subject, parametric object)."""
    if knowledge_base_objects is None:
        knowledge_base_objects = ["Q%d" % (900 + i) for i in range(len(pairs))]
    rows = [
        {
            "statement_subject": s,
            "rel_lemma": "P%d" % (17 + i),
            "statement": "%s is linked to %s." % (s, kb),
            "knowledge_base_object": kb,
            "parametric_object": o,
            "relation_group_id": 1 + i % 3,
            "log_probability_parametric_object_first_token": -0.25 * (i + 1),
        }
        for i, ((s, o), kb) in enumerate(zip(pairs, knowledge_base_objects))
    ]
    return pd.DataFrame(rows, columns=COLUMNS, index=index)


def overlaps(subject, obj, threshold):
    """The rule, written independently: lower-cased containment either way, else cased Jaro-Winkler."""
    s, o = subject.lower(), obj.lower()
    if s in o or o in s:
        return True
    return _jw(subject, obj) >= threshold


PAIRS = [
    ("Canada", "canadian"),
    ("Rome", "roma"),
    ("Munich", "munchen"),
    ("Toyota Corolla", "toyota"),
    ("Nokia", "finland"),
    ("Apple Watch", "apple"),
    ("Martin", "martina"),
    ("Berlin", "berlin"),
    ("Jean", "jean dupont"),
    ("Stefan", "STEPHAN"),
    ("Lisbon", "lisboa"),
    ("Warsaw", "warszawa"),
    ("Kyoto", "tokyo"),
    ("Dublin", "dubai"),
]


def kept_subjects(result):
    return list(result["statement_subject"])


@pytest.mark.parametrize("threshold", [0.5, 0.7, 0.8, 0.85, 0.9, 0.99])
def test_rows_kept_are_exactly_those_without_overlap(threshold):
    df = make_frame(PAIRS)
    out = remove_object_subject_overlap(df, string_similarity_ratio=threshold)
    expected = [s for s, o in PAIRS if not overlaps(s, o, threshold)]
    assert kept_subjects(out) == expected


def test_default_threshold_is_point_eight():
    df = make_frame(PAIRS)
    default = remove_object_subject_overlap(df.copy())
    explicit = remove_object_subject_overlap(df.copy(), string_similarity_ratio=0.8)
    _frame_equal(default, explicit)
    # Canada/canadian (0.82) and Martin/martina (0.85) go at 0.8; Munich/munchen (0.75) stays
    assert "Canada" not in kept_subjects(default) and "Martin" not in kept_subjects(default)
    assert "Munich" in kept_subjects(default)


def test_similarity_equal_to_the_threshold_counts_as_overlap():
    # neither string contains the other; the threshold is set to the pair's own similarity
    pairs = [("Canada", "canadian"), ("Martha", "marhta"), ("Nokia", "finland")]
    df = make_frame(pairs)
    for subject, obj in pairs[:2]:
        out = remove_object_subject_overlap(df, string_similarity_ratio=_jw(subject, obj))
        assert subject not in kept_subjects(out)


def test_similarity_is_computed_on_the_cased_strings():
    # lower-cased, these pairs are close (0.89 .. 0.96); as written they are far apart
    df = make_frame([("Munich", "munchen"), ("Stefan", "STEPHAN"), ("Marta", "MARHTA")])
    out = remove_object_subject_overlap(df, string_similarity_ratio=0.85)
    assert kept_subjects(out) == ["Munich", "Stefan", "Marta"]


def test_containment_ignores_case_and_works_both_ways():
    df = make_frame([("Berlin", "BERLIN"), ("Harry Potter", "potter"), ("Jean", "jean dupont"), ("iPhone", "IPHONE")])
    out = remove_object_subject_overlap(df, string_similarity_ratio=1.5)  # no similarity can reach 1.5
    assert len(out) == 0


def test_threshold_above_one_removes_only_containment():
    df = make_frame(PAIRS)
    out = remove_object_subject_overlap(df, string_similarity_ratio=1.01)
    assert kept_subjects(out) == [s for s, o in PAIRS if not (s.lower() in o.lower() or o.lower() in s.lower())]


def test_only_the_parametric_object_is_compared_with_the_subject():
    # knowledge-base objects equal to the subject (and statements naming it) must not matter
    pairs = [("Nokia", "finland"), ("Kyoto", "tokyo"), ("Berlin", "berlin")]
    df = make_frame(pairs, knowledge_base_objects=["Nokia", "kyoto", "Germany"])
    out = remove_object_subject_overlap(df, string_similarity_ratio=0.8)
    assert kept_subjects(out) == ["Nokia", "Kyoto"]


def test_zero_threshold_removes_every_row():
    df = make_frame(PAIRS)
    out = remove_object_subject_overlap(df, string_similarity_ratio=0.0)
    assert isinstance(out, pd.DataFrame)
    assert len(out) == 0


def test_higher_threshold_keeps_a_superset():
    df = make_frame(PAIRS)
    previous = set()
    for threshold in (0.6, 0.7, 0.8, 0.9, 1.0):
        kept = set(kept_subjects(remove_object_subject_overlap(df, string_similarity_ratio=threshold)))
        assert previous <= kept
        previous = kept
    assert previous  # something survives at 1.0


def test_index_order_and_other_columns_are_preserved():
    index = [31, 4, 17, 90, 2, 58, 11, 73, 6, 45, 8, 27, 64, 19]
    df = make_frame(PAIRS, index=index)
    out = remove_object_subject_overlap(df, string_similarity_ratio=0.8)
    keep = [i for i, (s, o) in zip(index, PAIRS) if not overlaps(s, o, 0.8)]
    _frame_equal(out, df.loc[keep])


def test_string_index_is_preserved():
    df = make_frame([("Nokia", "finland"), ("Berlin", "berlin"), ("Kyoto", "tokyo")], index=["a", "b", "c"])
    out = remove_object_subject_overlap(df)
    assert list(out.index) == ["a", "c"]


@probe
def frame_after_filtering(df, string_similarity_ratio):
    """In the candidate: the input frame as remove_object_subject_overlap leaves it."""
    from src.data import remove_object_subject_overlap

    remove_object_subject_overlap(df, string_similarity_ratio=string_similarity_ratio)
    return df


def test_input_frame_is_not_modified():
    df = make_frame(PAIRS, index=list(range(100, 100 + len(PAIRS))))
    before = copy.deepcopy(df)
    _frame_equal(frame_after_filtering(df, 0.7), before)


def _assert_empty_with_the_columns_of(out, df):
    """No row, and the input's columns: same names, same order, same dtypes (the index is free)."""
    assert isinstance(out, pd.DataFrame)
    assert len(out) == 0
    assert list(out.columns) == list(df.columns)
    assert [str(t) for t in out.dtypes] == [str(t) for t in df.dtypes]


def test_no_row_left_still_has_the_columns():
    # every example overlaps: the pipeline's next step still reads columns of the result
    df = make_frame([("Toyota Corolla", "toyota"), ("Berlin", "berlin"), ("iPhone", "IPHONE")], index=[12, 5, 40])
    out = remove_object_subject_overlap(df)
    _assert_empty_with_the_columns_of(out, df)


def _empty_after_a_filter():
    df = make_frame(PAIRS)
    return df[df["relation_group_id"] > 99]  # typed columns (int64, float64), no row


def _empty_from_column_names():
    return pd.DataFrame(columns=COLUMNS)  # object columns, no row


@pytest.mark.parametrize("make_empty", [_empty_after_a_filter, _empty_from_column_names], ids=["filtered", "from-columns"])
def test_empty_frame_gives_an_empty_frame_with_the_same_columns(make_empty):
    df = make_empty()
    out = remove_object_subject_overlap(df)
    _assert_empty_with_the_columns_of(out, df)


def test_single_row_without_overlap_is_kept():
    df = make_frame([("Nokia", "finland")], index=[7])
    _frame_equal(remove_object_subject_overlap(df), df)


def test_single_row_with_overlap_is_removed():
    assert len(remove_object_subject_overlap(make_frame([("Paris", "paris")]))) == 0
