"""Property tests for conll_tree.spacy_result_to_conll (ours).

The sentences are parsed by the grader's stand-in for en_core_web_sm (tests/spacy_parses.py,
installed by the candidate's set-up, tests/candidate_setup.py): real spaCy Docs with
hand-written or seeded random parses. The expected tables come from an oracle written here
from the task's format (ten left-aligned columns of widths 5, 10, 10, 6, 6, 6, 6, 8, 6, 6, one
space apart, a newline after every line, values never cut), not from the reference.

The function runs in the candidate process (lmr_bridge): the probe below registers a parse
chosen here with the stand-in there and converts its sentence; the table comes back as a str
and is checked here. This process never imports conll_tree or spaCy (it reads the parses'
table, spacy_parses.PARSES, and text_of).
"""
import random

import pytest
from lmr_bridge import probe

import spacy_parses

WIDTHS = (5, 10, 10, 6, 6, 6, 6, 8, 6, 6)
HEADER = ("ID", "text", "LEMMA", "POS", "Tag", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")

WORDS = ["food", "screen", "battery", "service", "keyboard", "was", "is", "not", "very", "great",
         "slow", "the", "a", "and", "but", "it", "I", "waiters", "touchpad", "unbelievably",
         "disappointing", "$", "350", "!", ".", ",", "café", "configuration", "Windows", "8"]
POS = ["NOUN", "VERB", "AUX", "ADJ", "ADV", "DET", "PRON", "PUNCT", "CCONJ", "PROPN", "NUM", "SYM", "PART"]
TAGS = ["NN", "NNS", "VBZ", "VBD", "JJ", "RB", "DT", "PRP", "CC", "NNP", "CD", "$", ".", ",", "-LRB-", "HYPH"]
DEPS = ["nsubj", "dobj", "amod", "advmod", "det", "punct", "cc", "conj", "acomp", "compound",
        "prep", "pobj", "neg", "aux", "nsubjpass", "npadvmod", "attr"]


def oracle_line(values):
    return " ".join(str(v).ljust(w) for v, w in zip(values, WIDTHS)) + "\n"


def oracle_table(tokens):
    out = oracle_line(HEADER)
    for i, (text, _space, lemma, pos, tag, head, dep) in enumerate(tokens):
        out += oracle_line((i + 1, text, lemma, pos, tag, "_", head + 1, dep, "_", "_"))
    return out


@probe
def table_of(tokens):
    """In the candidate: the parse registered with the stand-in pipeline (the hand-written
    ones are there already), then spacy_result_to_conll on its sentence."""
    from conll_tree import spacy_result_to_conll

    return spacy_result_to_conll(spacy_parses.register(tokens))


def convert(tokens):
    out = table_of(tokens)
    assert type(out) is str, f"expected a str, got {type(out).__name__}"
    return out


def rows(tokens):
    """The output's token lines split on blanks (only for parses without whitespace tokens).

    The contract ends the table with a newline; that is the concern of the tests that check
    the whole string (test_one_line_per_token_each_ending_in_newline and the exact-table
    tests), so the column checks that use this helper read the lines whether or not the last
    one ends in one. Only that one final newline is set aside: a blank line, a missing row or
    a wrong value still fails the test that reads the rows."""
    out = convert(tokens)
    lines = (out[:-1] if out.endswith("\n") else out).split("\n")
    return [line.split() for line in lines[1:]]


def random_tree(rng, n, roots=1):
    """A seeded random parse of n tokens: `roots` sentences in a row, each a tree over its span."""
    cuts = sorted(rng.sample(range(1, n), roots - 1)) if roots > 1 else []
    spans = list(zip([0] + cuts, cuts + [n]))
    heads, deps = [None] * n, [None] * n
    for start, end in spans:
        order = list(range(start, end))
        rng.shuffle(order)
        root = order[0]
        heads[root], deps[root] = root, "ROOT"
        for k, i in enumerate(order[1:], start=1):
            heads[i] = order[rng.randrange(k)]
            deps[i] = rng.choice(DEPS)
    tokens = []
    for i in range(n):
        word = rng.choice(WORDS)
        lemma = word.lower() if rng.random() < 0.7 else word.lower() + "e"
        tokens.append((word, i < n - 1 and rng.random() < 0.8, lemma, rng.choice(POS), rng.choice(TAGS),
                       heads[i], deps[i]))
    return tokens


def registered(tokens):
    """The parse, checked as spacy_parses.register checks it (the probe registers it in the candidate)."""
    n = len(tokens)
    assert all(0 <= t[5] < n for t in tokens)
    return tokens


TWO_CLAUSES = spacy_parses.PARSES[0]
LONG_VALUES = spacy_parses.PARSES[2]
TWO_SENTENCES = spacy_parses.PARSES[3]
WHITESPACE = spacy_parses.PARSES[4]
EMPTY = spacy_parses.PARSES[8]


def test_returns_a_str():
    assert type(table_of(TWO_CLAUSES)) is str


def test_header_line_is_exact():
    first = convert(TWO_CLAUSES).split("\n")[0] + "\n"
    assert first == oracle_line(HEADER)


def test_empty_sentence_gives_the_header_only():
    assert convert(EMPTY) == oracle_line(HEADER)


def test_one_line_per_token_each_ending_in_newline():
    out = convert(TWO_CLAUSES)
    assert out.endswith("\n")
    assert out.count("\n") == len(TWO_CLAUSES) + 1


def test_ids_are_one_based_positions():
    assert [r[0] for r in rows(TWO_CLAUSES)] == [str(i + 1) for i in range(len(TWO_CLAUSES))]


def test_heads_are_ids_of_the_head_tokens():
    assert [r[6] for r in rows(TWO_CLAUSES)] == [str(t[5] + 1) for t in TWO_CLAUSES]


def test_root_head_is_its_own_id():
    table = rows(TWO_CLAUSES)
    root = [i for i, t in enumerate(TWO_CLAUSES) if t[6] == "ROOT"]
    assert root and all(table[i][6] == table[i][0] for i in root)


def test_ids_run_on_across_sentences():
    assert [r[0] for r in rows(TWO_SENTENCES)] == [str(i) for i in range(1, len(TWO_SENTENCES) + 1)]


def test_heads_in_a_later_sentence_are_whole_doc_ids():
    assert [r[6] for r in rows(TWO_SENTENCES)] == [str(t[5] + 1) for t in TWO_SENTENCES]


def test_lemma_pos_tag_and_label_columns():
    table = rows(TWO_CLAUSES)
    assert [(r[1], r[2], r[3], r[4], r[7]) for r in table] == [(t[0], t[2], t[3], t[4], t[6]) for t in TWO_CLAUSES]


def test_unused_columns_are_underscores():
    table = rows(TWO_CLAUSES)
    assert all(len(r) == 10 and (r[5], r[8], r[9]) == ("_", "_", "_") for r in table)


def test_long_values_are_written_whole():
    assert convert(LONG_VALUES) == oracle_table(LONG_VALUES)


def test_whitespace_token_has_its_row():
    assert convert(WHITESPACE) == oracle_table(WHITESPACE)


@pytest.mark.parametrize("seed", range(12))
def test_matches_the_format_on_random_parses(seed):
    rng = random.Random(1000 + seed)
    n = rng.choice([1, 2, 3, 7, 12, 25, 40, 120])
    tokens = registered(random_tree(rng, n, roots=1 if n < 3 else rng.randint(1, 3)))
    assert convert(tokens) == oracle_table(tokens)
