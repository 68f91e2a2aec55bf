"""Grader tests for probe_decision_boundary (get_llm_decision_boundary.py): the in-context
decision boundary of a language model, probed on a grid.

Each case is a probe as the pipeline runs one: the in-context points of one task (drawn
here as the pipeline draws them: a scikit-learn data set rescaled to [0, 100], the same
number of points per class, shuffled), the pipeline's system and query prompts for a pair
of class names, a grid size, and a model name (base, or an instruction-tuned one, which
selects the other prompt format). The model is a tiny random BLOOM and its tokenizer a real
word-level Hugging Face tokenizer (tests/tiny_lm.py), both built from fixed seeds.

What is checked, against the account of the method in tests/boundary_oracle.py:
- the returned grid (its range, size and layout);
- every grid point's label, where the oracle's label is clear (its greedy token and the
  deciding scores win by more than 1e-3, so the way the model is run, with or without a
  key/value cache, cannot change it); nearly all points must be clear;
- that equal class scores go to the first class;
- and, about the cases themselves, that they exercise each rule the label depends on (so
  that an implementation missing one of them fails somewhere).

Where the code runs: get_llm_decision_boundary.py is imported only in the candidate process
(lmr_bridge). The probe below builds the tiny model and tokenizer there from their seed,
calls probe_decision_boundary with the inputs made here, and sends back what it returned.
The expected values are computed in this process, with the same tiny model and tokenizer.
"""
import functools

import numpy as np
import pytest
from lmr_bridge import probe

import boundary_oracle as oracle
import tiny_lm

BASE = "Llama-3-8B"
INSTRUCT = "llama3-8b_instruct"  # contains "instruct": the instruction prompt format

# id: (model seed, data kind, data seed, in-context points, class names (an experiment of the
# script, or a pair of names), model name, grid size)
CASES = {
    "moon-foobar-instruct": (1, "moon", 11, 16, "foobar", INSTRUCT, 6),
    "linear-AandB": (1, "linear", 11, 16, "AandB", BASE, 6),
    "circle-reverse_foobar": (1, "circle", 11, 16, "reverse_foobar", BASE, 6),
    "linear-01": (2, "linear", 12, 16, "01", BASE, 6),
    "moon-yesno-instruct": (2, "moon", 12, 16, "yesno", INSTRUCT, 6),
    "circle-PosNeg": (2, "circle", 12, 24, "PosNeg", BASE, 5),
    "linear-foobar": (3, "linear", 13, 16, "foobar", BASE, 7),
    "linear-AandB-instruct": (4, "linear", 14, 16, "AandB", INSTRUCT, 6),
    "moon-PosNeg": (6, "moon", 16, 16, "PosNeg", BASE, 6),
    "circle-01": (0, "circle", 10, 12, "01", BASE, 6),
    # names of two tokens each: a name's score is its last token's
    "linear-two-token-names": (4, "linear", 24, 16, ("Yes 0", "No 1"), BASE, 5),
}
MIN_CLEAR = 0.9


def script_args(grid_size, model_name):
    """The script's options as argparse leaves them (its defaults), with the two the probe reads."""
    return {
        "model_name": model_name, "num_in_context": 128, "grid_size": grid_size, "num_test_samples": 100,
        "load_bit": 8, "seed": 0, "exp_name": "01", "num_dimensions": 2, "num_tasks": 1000,
        "num_samples_per_task": 800, "train_ratio": 0.8, "data_type": "linear", "class_sep": 1.0,
        "circle_factor": 0.5,
    }


@probe
def run_probe(model_seed, options, context_x, context_y, class_names, system_prompt, query_prompt):
    """In the candidate: probe_decision_boundary on the tiny model `model_seed` and its tokenizer."""
    import argparse

    from get_llm_decision_boundary import probe_decision_boundary
    from tiny_lm import make_model, make_tokenizer

    model, tokenizer = make_model(model_seed), make_tokenizer()
    args = argparse.Namespace(**options)
    return probe_decision_boundary(model, tokenizer, args, context_x, context_y, class_names, system_prompt, query_prompt)


@functools.lru_cache(maxsize=None)
def inputs(case):
    model_seed, kind, data_seed, n, experiment, model_name, size = CASES[case]
    X, y = oracle.context_set(kind, data_seed, n)
    names = list(oracle.EXPERIMENTS[experiment] if isinstance(experiment, str) else experiment)
    return model_seed, X, y, names, model_name, size


@functools.lru_cache(maxsize=None)
def got(case):
    model_seed, X, y, names, model_name, size = inputs(case)
    return run_probe(model_seed, script_args(size, model_name), X, y, list(names), oracle.system_prompt(names), oracle.QUERY)


@functools.lru_cache(maxsize=None)
def model_and_tokenizer(model_seed):
    return tiny_lm.make_model(model_seed), tiny_lm.make_tokenizer()


@functools.lru_cache(maxsize=None)
def expected(case, write=oracle.point_text):
    model_seed, X, y, names, model_name, size = inputs(case)
    model, tokenizer = model_and_tokenizer(model_seed)
    return oracle.boundary(model, tokenizer, X, y, names, size, model_name, write=write)


def as_array(value):
    assert isinstance(value, np.ndarray), "expected a numpy array, got %s" % type(value).__name__
    return value


@pytest.mark.parametrize("case", list(CASES))
def test_returns_the_grid_and_one_label_per_grid_point(case):
    size = CASES[case][-1]
    out = got(case)
    assert isinstance(out, (tuple, list)) and len(out) == 3
    xx1, xx2, labels = (as_array(v) for v in out)
    assert xx1.shape == xx2.shape == labels.shape == (size, size)
    assert np.issubdtype(labels.dtype, np.number) and not np.iscomplexobj(labels)
    assert set(np.unique(labels).tolist()) <= {0, 1}


@pytest.mark.parametrize("case", list(CASES))
def test_grid_spans_the_in_context_range_widened_by_one(case):
    xx1, xx2, _ = got(case)
    want = expected(case)
    np.testing.assert_allclose(as_array(xx1), want["xx1"], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(as_array(xx2), want["xx2"], rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("case", list(CASES))
def test_labels_are_the_models_greedy_answers(case):
    labels = as_array(got(case)[2])
    want = expected(case)
    clear = want["clear"]
    assert clear.mean() >= MIN_CLEAR, "the case has too many near ties to decide"
    assert labels.shape == want["labels"].shape
    wrong = np.argwhere(clear & (labels != want["labels"]))
    assert wrong.size == 0, "labels differ at grid points (row, column) %s" % wrong.tolist()


def test_equal_class_scores_go_to_the_first_class():
    # both names end in the same token (" A"), so their scores are always equal, and no
    # single token's text contains either name: every point goes to the first class
    names = ["Foo A", "Bar A"]
    X, y = oracle.context_set("linear", 11, 16)
    tokenizer = tiny_lm.make_tokenizer()
    assert oracle.label_token_ids(tokenizer, names[0]) == oracle.label_token_ids(tokenizer, names[1])
    labels = as_array(run_probe(1, script_args(4, BASE), X, y, names, oracle.system_prompt(names), oracle.QUERY)[2])
    assert labels.shape == (4, 4)
    assert np.all(labels == 0)


# ---------------------------------------------------------------- the cases themselves


def _ways(case):
    """Per point: how the oracle read its label, the label, and the labels the scores would
    give with both forms of each name, the bare name only and the spaced name only."""
    model_seed, X, y, names, model_name, size = inputs(case)
    _, tokenizer = model_and_tokenizer(model_seed)
    want = expected(case)
    ids = [oracle.label_token_ids(tokenizer, name) for name in names]
    rows = []
    for how, label, clear, lg in zip(want["how"].ravel(), want["labels"].ravel(), want["clear"].ravel(), want["logits"]):
        if not clear:
            continue
        both = int(max(lg[i] for i in ids[1]) > max(lg[i] for i in ids[0]))
        bare = int(lg[ids[1][0]] > lg[ids[0][0]])
        spaced = int(lg[ids[1][1]] > lg[ids[0][1]])
        rows.append((how, int(label), both, bare, spaced))
    return rows


def test_cases_cover_each_rule_a_label_depends_on():
    rows = [r for case in CASES for r in _ways(case)]
    # labels read from the token's text that the scores would have turned the other way
    assert any(how == "text" and label == 0 and both == 1 for how, label, both, _, _ in rows)
    assert any(how == "text" and label == 1 and both == 0 for how, label, both, _, _ in rows)
    # labels read from the scores that only one form of the names would get wrong
    assert any(how == "scores" and both != bare for how, _, both, bare, _ in rows)
    assert any(how == "scores" and both != spaced for how, _, both, _, spaced in rows)
    # both prompt formats, and each case's boundary is not one class everywhere
    assert {CASES[c][5] for c in CASES} == {BASE, INSTRUCT}
    for case in CASES:
        labels = expected(case)["labels"]
        assert 0 < labels.sum() < labels.size, case


def _rounded(a, b):
    return "%d %d" % (round(a), round(b))


def test_cases_where_rounding_the_grid_point_would_change_the_label():
    changed = 0
    for case in ("linear-01", "linear-foobar", "moon-PosNeg"):
        want, other = expected(case), expected(case, write=_rounded)
        changed += int((want["clear"] & other["clear"] & (want["labels"] != other["labels"])).sum())
    assert changed > 0
