"""Property tests for is_parametric_object_not_in_the_prompt (src/parametric_knowledge.py).

The rule (the instruction's contract): an answer is rejected (False) exactly when, once
lower-cased, it equals a whole generation_object_1 cell and a whole generation_subject_1
cell of the relations table (any rows); missing cells match nothing; other columns do not
count. The oracle below is written here from that rule; the other tests pin one part of
it each: case, whole cells, which columns, rows of different relations, missing cells,
the index, the table left unchanged.

The code under test runs in the candidate process (lmr_bridge): the tables built here go
there as pandas frames and the answer comes back as a bool; every expectation is computed
here.
"""
import copy
import math

import numpy as np
import pandas as pd
import pytest
from lmr_bridge import candidate, probe

_frame_equal = pd.testing.assert_frame_equal
_bool_types = (bool, np.bool_)

is_parametric_object_not_in_the_prompt = candidate.function(
    "src.parametric_knowledge:is_parametric_object_not_in_the_prompt"
)

NA = math.nan
COLUMNS = [
    "relation_group_id",
    "relation",
    "object_generation_description",
    "raw_subject",
    "raw_object",
    "generation_statement_1",
    "generation_subject_1",
    "generation_relation_1",
    "generation_object_1",
    "generation_statement_2",
    "generation_object_2",
]


def make_table(examples, index=None, second_objects=None, raw=None):
    """A relations table as the pipeline reads it: one row per (relation, subject, object) example."""
    rows = []
    for k, (relation, subject, obj) in enumerate(examples):
        raw_subject, raw_object = (subject, obj) if raw is None else raw[k]
        second = NA if second_objects is None else second_objects[k]
        statement = NA if not isinstance(subject, str) else "%s is linked by %s to" % (subject, relation)
        rows.append({
            "relation_group_id": "group-%d" % (k % 3),
            "relation": relation,
            "object_generation_description": "the object of %s" % relation,
            "raw_subject": raw_subject,
            "raw_object": raw_object,
            "generation_statement_1": statement,
            "generation_subject_1": subject,
            "generation_relation_1": "is linked by %s to" % relation,
            "generation_object_1": obj,
            "generation_statement_2": NA if not isinstance(second, str) else statement,
            "generation_object_2": second,
        })
    return pd.DataFrame(rows, columns=COLUMNS, index=index)


def expected(answer, table):
    """The rule, written independently: lower-cased whole-cell equality in both columns."""
    a = answer.lower()
    objects = {c.lower() for c in table["generation_object_1"] if isinstance(c, str)}
    subjects = {c.lower() for c in table["generation_subject_1"] if isinstance(c, str)}
    return not (a in objects and a in subjects)


def check(answer, table):
    result = is_parametric_object_not_in_the_prompt(answer, table)
    assert isinstance(result, _bool_types), "expected a bool, got %r" % (result,)
    return bool(result)


EXAMPLES = [
    ("headquartered-in", "Airbus", "Toulouse"),
    ("twin-city-of", "Toulouse", "Atlanta"),
    ("capital-of", "Canberra", "Australia"),
    ("borders", "Australia", "Papua New Guinea"),
    ("part-of-continent", "Australia", "Oceania"),
    ("citizen-of", "Nelson Mandela", "South Africa"),
    ("diplomatic-relations", "The Netherlands", "Indonesia"),
    ("located-in", "The Rijksmuseum", "the Netherlands"),
    ("located-in-city", "The Zócalo", "Ciudad de México"),
    ("capital-city-of", "Ciudad de México", "Mexico"),
    ("works-for", "Fei-Fei Li,", "Stanford University"),
    ("employed-by", "Fei-Fei Li", "Stanford University"),
    ("mother-tongue", "Frida Kahlo's", "Spanish"),
    ("owned-by", "Instagram", "Meta"),
    ("headquarter", "Meta", "Menlo Park"),
    ("manufactured-by", "The PlayStation 5", "Sony"),
    ("subclass-of", "Trout", "Fish"),
    ("named-after", "Keynesianism is", "John Maynard Keynes"),
    ("name-for", NA, NA),
    ("plays-instrument", "Jacqueline du Pré", "cello"),
]
SECOND = [NA] * len(EXAMPLES)
SECOND[16] = "Bird"
SECOND[2] = "Canberra"
TABLE = make_table(EXAMPLES, second_objects=SECOND)

ANSWERS = [
    "toulouse", "australia", "the netherlands", "ciudad de méxico", "meta",  # object and subject
    "airbus", "canberra", "fei-fei li", "fei-fei li,", "frida kahlo's", "instagram",  # subjects only
    "atlanta", "oceania", "stanford university", "sony", "fish", "john maynard keynes",  # objects only
    "bird", "netherlands", "mexico city", "keynesianism", "stanford", "the", "nan", "", "kyoto",
    "TOULOUSE", "The Netherlands", "Ciudad De México", "Meta", "Sony",
]


@pytest.mark.parametrize("answer", ANSWERS, ids=[repr(a) for a in ANSWERS])
def test_result_follows_the_rule_on_a_pipeline_like_table(answer):
    assert check(answer, TABLE) == expected(answer, TABLE)


@pytest.mark.parametrize("answer", ["toulouse", "australia", "meta", "ciudad de méxico"])
def test_an_answer_that_is_an_example_object_and_an_example_subject_is_rejected(answer):
    assert check(answer, TABLE) is False


@pytest.mark.parametrize("answer", ["atlanta", "oceania", "sony", "fish", "stanford university"])
def test_an_answer_matching_only_example_objects_is_kept(answer):
    assert check(answer, TABLE) is True


@pytest.mark.parametrize("answer", ["airbus", "canberra", "fei-fei li", "instagram"])
def test_an_answer_matching_only_example_subjects_is_kept(answer):
    assert check(answer, TABLE) is True


def test_the_object_and_the_subject_may_come_from_different_relations():
    table = make_table([("owned-by", "Instagram", "Meta"), ("headquarter", "Meta", "Menlo Park")])
    assert check("meta", table) is False
    assert check("meta", table.iloc[[0]]) is True  # the object alone
    assert check("meta", table.iloc[[1]]) is True  # the subject alone


def test_the_object_and_the_subject_of_one_row():
    table = make_table([("capital-of", "Monaco", "Monaco"), ("borders", "France", "Spain")])
    assert check("monaco", table) is False
    assert check("spain", table) is True


def test_case_is_ignored_on_both_sides():
    table = make_table([("a", "THE NETHERLANDS", "Indonesia"), ("b", "The Rijksmuseum", "the Netherlands")])
    for answer in ["the netherlands", "The Netherlands", "THE NETHERLANDS", "tHE nETHERLANDS"]:
        assert check(answer, table) is False, answer


def test_non_ascii_letters_are_lower_cased_too():
    table = make_table([("a", "ÉCOLE POLYTECHNIQUE", "Palaiseau"), ("b", "Gaspard Monge", "École Polytechnique")])
    assert check("école polytechnique", table) is False
    assert check("ecole polytechnique", table) is True  # accents are not removed


@pytest.mark.parametrize(
    "answer",
    ["netherlands", "the", "the netherlands museum", "rijksmuseum", "fei-fei", "li", "ciudad", "de"],
)
def test_pieces_or_extensions_of_a_cell_do_not_match(answer):
    table = make_table([
        ("a", "The Netherlands", "Indonesia"), ("b", "The Rijksmuseum", "the Netherlands"),
        ("c", "Fei-Fei Li", "Fei-Fei Li"), ("d", "Ciudad de México", "Ciudad de México"),
    ])
    assert check(answer, table) is True


def test_punctuation_in_a_cell_is_part_of_it():
    table = make_table([("works-for", "Fei-Fei Li,", "Stanford University"), ("advisor-of", "Pietro Perona", "Fei-Fei Li")])
    assert check("fei-fei li", table) is True  # the subject is written 'Fei-Fei Li,'
    assert check("fei-fei li,", table) is True  # now the object does not match
    both = make_table([("works-for", "Fei-Fei Li,", "Stanford University"), ("advisor-of", "Pietro Perona", "Fei-Fei Li,")])
    assert check("fei-fei li,", both) is False


def test_only_the_first_example_columns_count():
    # 'bird' fills every other column that could hold an entity, never generation_*_1
    examples = [("subclass-of", "Trout", "Fish"), ("eats", "Owl", "Mouse")]
    table = make_table(examples, second_objects=["Bird", "Bird"], raw=[("Bird", "Bird"), ("bird", "BIRD")])
    table["generation_statement_1"] = ["Bird", "bird"]
    table["relation"] = ["bird", "Bird"]
    assert check("bird", table) is True
    with_bird = make_table(examples + [("a", "Bird", "Bird")])
    assert check("bird", with_bird) is False


def test_missing_cells_match_nothing():
    table = make_table([("name-for", NA, NA), ("plays", "Jacqueline du Pré", "cello"), ("x", NA, "nan")])
    for answer in ["nan", "NaN", "", "none", "cello"]:
        assert check(answer, table) is True, answer


def test_missing_cells_do_not_hide_the_other_rows():
    table = make_table([("name-for", NA, NA), ("a", "Meta", "Menlo Park"), ("b", "Instagram", "Meta"), ("c", NA, NA)])
    assert check("meta", table) is False


def test_row_order_and_index_do_not_matter():
    order = [5, 0, 13, 1, 18, 14, 3, 2, 7, 6]
    for index in (None, [40 + 3 * i for i in range(len(order))], ["r%d" % i for i in order]):
        table = make_table([EXAMPLES[i] for i in order], index=index)
        for answer in ["toulouse", "meta", "australia", "the netherlands", "airbus", "indonesia"]:
            assert check(answer, table) == expected(answer, table), (index, answer)


def test_more_example_rows_can_only_reject_more_answers():
    for answer in ANSWERS:
        smaller = check(answer, TABLE.iloc[:8])
        larger = check(answer, TABLE)
        assert smaller or not larger, answer


@probe
def table_after_answers(answers, table):
    """In the candidate: the table as is_parametric_object_not_in_the_prompt leaves it after `answers`."""
    from src.parametric_knowledge import is_parametric_object_not_in_the_prompt

    for answer in answers:
        is_parametric_object_not_in_the_prompt(answer, table)
    return table


def test_the_table_is_not_modified():
    table = make_table(EXAMPLES, index=list(range(100, 100 + len(EXAMPLES))), second_objects=SECOND)
    before = copy.deepcopy(table)
    _frame_equal(table_after_answers(["toulouse", "Meta", "bird", "nan"], table), before)
