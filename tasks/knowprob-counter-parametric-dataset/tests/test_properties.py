"""Property tests for generate_counter_parametric_knowledge_dataset (src/data.py).

The counter-parametric knowledge of an example (s, r, o) is k triplets (s, r, o, o-bar) whose
counter-object o-bar is another object of the same relation r, among those the model was
least likely to generate (the paper's Section 3.2, Equations 2-3): the probability of an
object is that of its first token (the first token the model generated when the object was
its answer) in the example's own first-step distribution. The oracle below ranks the
candidates from that definition; where candidates are equally likely (objects that share a
first token) any order among them is accepted.

The code under test runs in the candidate process (lmr_bridge): the frames built here (by
tests/parametric_frames.py, in this process) go there as pandas frames and the result comes
back as one; every expectation is computed here, from the frames this file builds.
"""
import copy

import numpy as np
import pandas as pd
import pytest
from lmr_bridge import candidate, probe

from parametric_frames import parametric_knowledge

generate = candidate.function("src.data:generate_counter_parametric_knowledge_dataset")

_frame_equal = pd.testing.assert_frame_equal

COLUMNS = ["statement_subject", "rel_lemma", "statement_object", "counter_knowledge_object", "statement",
           "statement_query", "parametric_knowledge_object", "relation_group_id"]
COPIED = {"statement_subject": "statement_subject", "rel_lemma": "rel_lemma", "statement_object": "statement_object",
          "statement": "statement", "parametric_knowledge_object": "parametric_object",
          "relation_group_id": "relation_group_id"}

FACTS = [
    ("Caracas", "capital-of", "Venezuela", "venezuela"),
    ("Brussels", "capital-of", "Belgium", "belgium"),
    ("Bern", "capital-of", "Switzerland", "germany"),
    ("Quito", "capital-of", "Ecuador", "ecuador"),
    ("Lima", "capital-of", "Peru", "peru"),
    ("Slava Zaitsev's", "mother-tongue", "Russian", "russian"),
    ("Dominique Rocheteau's", "mother-tongue", "French", "french"),
    ("Maximilian Voloshin's", "mother-tongue", "Russian", "russian"),
    ("Simone Vagnozzi's", "mother-tongue", "Italian", "italian"),
    ("Ivan Bunin's", "mother-tongue", "Russian", "russian"),
    ("Mount Kenya", "part-of-continent", "Africa", "africa"),
    ("Aconcagua", "part-of-continent", "South America", "south america"),
    ("Lake Baikal", "part-of-continent", "Asia", "asia"),
    ("Ben Nevis", "part-of-continent", "Europe", "europe"),
    ("Iran", "official-religion", "Islam", "islam"),
    ("Thailand", "official-religion", "Buddhism", "buddhism"),
    ("Malta", "official-religion", "Catholicism", "roman catholicism"),
    ("Nepal", "official-religion", "Hinduism", "hinduism"),
]

# objects of one relation that share their first word, hence their first token: equally likely candidates
TIED = [
    ("Nintendo", "is-headquarter", "Kyoto", "kyoto"),
    ("WWE", "is-headquarter", "Stamford", "new york"),
    ("Tata Group", "is-headquarter", "Mumbai", "new delhi"),
    ("Air New Zealand", "is-headquarter", "Auckland", "new zealand"),
    ("BNP Paribas", "is-headquarter", "Paris", "paris"),
    ("Sky UK", "is-headquarter", "London", "london"),
    ("Aconcagua", "part-of-continent", "South America", "south america"),
    ("Table Mountain", "part-of-continent", "Africa", "south africa"),
    ("Kilimanjaro", "part-of-continent", "Africa", "africa"),
    ("Mont Blanc", "part-of-continent", "Europe", "europe"),
    ("Malta", "official-religion", "Catholicism", "roman catholicism"),
    ("Vatican City", "official-religion", "Catholicism", "roman church"),
    ("Greece", "official-religion", "Orthodoxy", "greek orthodoxy"),
    ("Iran", "official-religion", "Islam", "islam"),
]


def first_tokens(frame):
    return {o: int(ids[0]) for o, ids in zip(frame.parametric_object, frame.model_output_tokens_ids)}


def candidates(frame, row):
    """Each other object of the example's relation, with its probability score (first-token log-probability)."""
    first = first_tokens(frame)
    others = set(frame.parametric_object[frame.rel_lemma == row.rel_lemma]) - {row.parametric_object}
    scores = row.log_probability_parametric_object_first_token
    return {o: scores[first[o]] for o in others}


def rows_of(result, row):
    mask = (result.statement_subject == row.statement_subject) & (result.rel_lemma == row.rel_lemma)
    return result[mask]


def frames():
    return {
        "distinct-first-tokens": parametric_knowledge(FACTS, seed=31),
        "shared-first-tokens": parametric_knowledge(TIED, seed=32, peak=0.5),
    }


@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("name", ["distinct-first-tokens", "shared-first-tokens"])
def test_counter_objects_are_the_least_likely_objects_of_the_relation(name, k):
    frame = frames()[name]
    result = generate(frame, k)
    for _, row in frame.iterrows():
        scores = candidates(frame, row)
        chosen = list(rows_of(result, row).counter_knowledge_object)
        assert len(chosen) == min(k, len(scores)), (row.statement_subject, chosen)
        assert len(set(chosen)) == len(chosen), chosen
        assert all(o in scores for o in chosen), (row.statement_subject, chosen, sorted(scores))
        assert sorted(scores[o] for o in chosen) == sorted(scores.values())[: len(chosen)], (row.statement_subject, chosen)


@pytest.mark.parametrize("name", ["distinct-first-tokens", "shared-first-tokens"])
def test_counter_objects_of_an_example_come_in_increasing_probability(name):
    frame = frames()[name]
    result = generate(frame, 4)
    for _, row in frame.iterrows():
        scores = candidates(frame, row)
        got = [scores[o] for o in rows_of(result, row).counter_knowledge_object]
        assert got == sorted(got), (row.statement_subject, got)


def test_counter_object_differs_from_the_parametric_object():
    frame = frames()["distinct-first-tokens"]
    result = generate(frame, 10)
    assert len(result) > 0
    assert (result.counter_knowledge_object != result.parametric_knowledge_object).all()


def test_counter_objects_come_from_the_relation_not_the_relation_group():
    # capital-of, mother-tongue and part-of-continent all belong to one relation group
    frame = frames()["distinct-first-tokens"]
    result = generate(frame, 10)
    objects = {rel: set(frame.parametric_object[frame.rel_lemma == rel]) for rel in set(frame.rel_lemma)}
    for rel, counter in zip(result.rel_lemma, result.counter_knowledge_object):
        assert counter in objects[rel], (rel, counter)


def test_every_other_object_of_the_relation_when_k_is_large():
    frame = frames()["distinct-first-tokens"]
    result = generate(frame, 50)
    for _, row in frame.iterrows():
        expected = set(frame.parametric_object[frame.rel_lemma == row.rel_lemma]) - {row.parametric_object}
        assert sorted(rows_of(result, row).counter_knowledge_object) == sorted(expected)


def test_repeated_answers_are_one_candidate():
    # three examples answered "russian": it is one candidate for the others and none for them
    frame = frames()["distinct-first-tokens"]
    result = generate(frame, 10)
    russian = frame[frame.parametric_object == "russian"]
    for _, row in russian.iterrows():
        assert sorted(rows_of(result, row).counter_knowledge_object) == ["french", "italian"]
    for _, row in frame[(frame.rel_lemma == "mother-tongue") & (frame.parametric_object != "russian")].iterrows():
        assert list(rows_of(result, row).counter_knowledge_object).count("russian") == 1


def test_probability_of_an_object_is_that_of_its_first_token():
    # "south america" has a very likely first token (" south") and a very unlikely second one (" america")
    frame = parametric_knowledge(FACTS, seed=33)
    first = first_tokens(frame)
    row_label = frame.index[frame.statement_subject == "Mount Kenya"][0]
    scores = list(frame.at[row_label, "log_probability_parametric_object_first_token"])
    second = int(frame.loc[frame.parametric_object == "south america", "model_output_tokens_ids"].iloc[0][1])
    scores[first["south america"]] = -0.3
    scores[second] = -40.0
    for o in ("asia", "europe"):
        scores[first[o]] = -9.0 if o == "asia" else -7.0
    frame.at[row_label, "log_probability_parametric_object_first_token"] = scores
    result = generate(frame, 2)
    row = frame.loc[row_label]
    assert list(rows_of(result, row).counter_knowledge_object) == ["asia", "europe"]


def test_each_example_is_ranked_with_its_own_distribution():
    frame = parametric_knowledge(FACTS, seed=34)
    first = first_tokens(frame)
    religion = frame[frame.rel_lemma == "official-religion"]
    wanted = {"Iran": "hinduism", "Thailand": "roman catholicism", "Malta": "islam", "Nepal": "buddhism"}
    for label, row in religion.iterrows():
        scores = list(row.log_probability_parametric_object_first_token)
        scores[first[wanted[row.statement_subject]]] = -50.0
        frame.at[label, "log_probability_parametric_object_first_token"] = scores
    result = generate(frame, 1)
    for _, row in religion.iterrows():
        assert list(rows_of(result, row).counter_knowledge_object) == [wanted[row.statement_subject]]


def test_rows_follow_the_examples_in_input_order():
    frame = parametric_knowledge(FACTS[::-1], seed=35, index=[100 - 3 * i for i in range(len(FACTS))])
    result = generate(frame, 2)
    expected = []
    for _, row in frame.iterrows():
        expected += [(row.statement_subject, row.rel_lemma)] * min(2, len(candidates(frame, row)))
    assert list(zip(result.statement_subject, result.rel_lemma)) == expected


def test_example_fields_are_copied_unchanged():
    frame = frames()["shared-first-tokens"]
    result = generate(frame, 3)
    for _, row in frame.iterrows():
        mine = rows_of(result, row)
        assert len(mine) > 0
        for out_column, in_column in COPIED.items():
            assert (mine[out_column] == row[in_column]).all(), (out_column, row.statement_subject)


def test_statement_query_is_the_statement_without_its_object():
    # statements where the object occurs only at the end: the query is what precedes it
    frame = frames()["distinct-first-tokens"]
    result = generate(frame, 2)
    for query, statement, obj in zip(result.statement_query, result.statement, result.statement_object):
        assert statement.endswith(" " + obj + ".")
        assert query == statement[: -len(obj) - 1].strip()


def test_columns_and_index():
    result = generate(frames()["distinct-first-tokens"], 3)
    assert list(result.columns) == COLUMNS
    assert list(result.index) == list(range(len(result)))


def test_integer_relation_group_ids_are_kept():
    groups = {"capital-of": 1, "mother-tongue": 1, "part-of-continent": 4, "official-religion": 7}
    frame = parametric_knowledge(FACTS, seed=36, groups=groups)
    result = generate(frame, 2)
    for rel, g in zip(result.rel_lemma, result.relation_group_id):
        assert g == groups[rel] and not isinstance(g, (str, float, np.floating)), (rel, g)


def test_zero_counter_objects_give_an_empty_frame():
    result = generate(frames()["distinct-first-tokens"], 0)
    assert isinstance(result, pd.DataFrame)
    assert len(result) == 0
    assert set(result.columns) <= set(COLUMNS)


def test_no_candidate_gives_an_empty_frame():
    # every example of every relation got the same answer as the others of its relation
    facts = [("Jimi Hendrix", "play-the", "guitar", "guitar"), ("Slash", "play-the", "guitar", "guitar"),
             ("Iran", "official-religion", "Islam", "islam")]
    result = generate(parametric_knowledge(facts, seed=37), 3)
    assert isinstance(result, pd.DataFrame)
    assert len(result) == 0
    assert set(result.columns) <= set(COLUMNS)


@probe
def frame_after_generating(frame, k):
    """In the candidate: the input frame as generate_counter_parametric_knowledge_dataset leaves it."""
    from src.data import generate_counter_parametric_knowledge_dataset

    generate_counter_parametric_knowledge_dataset(frame, k)
    return frame


def test_input_frame_is_not_modified():
    before = parametric_knowledge(FACTS, seed=38)
    frame = frame_after_generating(copy.deepcopy(before), 3)
    simple = [c for c in frame.columns if c != "model_output_tokens_ids"]
    _frame_equal(frame[simple], before[simple])
    for ids, old in zip(frame.model_output_tokens_ids, before.model_output_tokens_ids):
        assert [int(t) for t in ids] == [int(t) for t in old]
