"""Driver for `lmr record`: spacy_result_to_conll on review sentences the grader's stand-in parses.

The conftest (tests/conftest.py) has installed the stand-in for en_core_web_sm before this
runs: each sentence below is answered with the hand-written parse in tests/spacy_parses.py.
They cover a plain two-clause review, a contraction (do + n't), words, lemmas and a label
longer than their column, two sentences in one string (ids and heads run on across them), a
whitespace token from a double space, non-ASCII words, one word and a mark, brackets and
hyphens with multi-character tags, and the empty string.
"""
import spacy_parses
from conll_tree import spacy_result_to_conll

for tokens in spacy_parses.PARSES:
    spacy_result_to_conll(spacy_parses.text_of(tokens))
