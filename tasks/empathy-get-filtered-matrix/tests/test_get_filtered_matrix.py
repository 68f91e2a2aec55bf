"""Tests for get_filtered_matrix (analysis/analysis_after_processing.py), ours.

The function reads, for every (perceiver, experiencer) pair of a group option's identities,
the processed results of one prompt variation and model from processed_results/ under the
current directory, averages each pair's intensities over the narratives that are not
excluded, and standardizes the whole matrix (the paper's normalized emotion matrix M).
The folders come from empathy_data.py; the oracle below averages the same values in memory.

get_filtered_matrix runs in the candidate process (lmr_bridge): the intensities are drawn
here, sent to the candidate, which writes them as a processed_results/ folder in a directory
of its own (empathy_data.write_folder, a candidate file) and calls the function from there.
Every expected value is computed here from the intensities drawn here.

Tolerance: the upstream rounds each cell's mean to two decimals before standardizing; the
instruction allows that and does not require it, so values are compared within 0.03 / s,
where s is the spread (population standard deviation) of the unrounded cell means, more
than rounding can move a standardized cell and far less than a wrong method moves it.
"""
import json
from pathlib import Path

import numpy as np
import pytest
from lmr_bridge import probe

_abs = np.abs
_max = np.max
_asarray = np.asarray

import empathy_data  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# group_mappings["religion"] of the module, in its order (the tests do not import the workspace)
RELIGION = ["a Christian", "a Muslim", "a Jew", "a Buddhist", "a Hindu"]
GROUPS = {"religion": RELIGION}


@probe
def filtered_matrices(folders, calls):
    """In the candidate: writes each folder (a list of experiments [group_option,
    prompt_variation, model_id, [[perceiver, experiencer, intensities], ...]]) as a
    processed_results/ folder in a fresh directory, then, for each call [folder index,
    group_option, prompt_variation, model_id, excluded], calls get_filtered_matrix from that
    directory. Returns, per call, the matrix and the excluded set as the call left it."""
    import contextlib
    import io
    import os
    import tempfile

    import empathy_data
    from analysis.analysis_after_processing import get_filtered_matrix

    here = os.getcwd()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        roots = []
        for k, experiments in enumerate(folders):
            root = os.path.join(tmp, "folder%d" % k)
            os.makedirs(root)
            for group_option, prompt_variation, model_id, pairs in experiments:
                empathy_data.write_folder(root, group_option, prompt_variation, model_id, {(p, e): v for p, e, v in pairs})
            roots.append(root)
        try:
            for folder, group_option, prompt_variation, model_id, excluded in calls:
                os.chdir(roots[folder])
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    matrix = get_filtered_matrix(group_option, prompt_variation, model_id, excluded)
                out.append({"matrix": matrix, "excluded": excluded})
        finally:
            os.chdir(here)
    return out


def experiment(group_option, prompt_variation, model_id, values):
    """One experiment's intensities as filtered_matrices takes them."""
    return [group_option, prompt_variation, model_id, [[p, e, v] for (p, e), v in values.items()]]


def oracle(groups, values, excluded):
    """(standardized matrix, spread of the raw cell means): rows perceivers, columns experiencers."""
    keep = np.ones(empathy_data.N_NARRATIVES, dtype=bool)
    keep[sorted(excluded)] = False
    raw = np.array([[values[(p, e)][keep].mean() for e in groups] for p in groups], dtype=float)
    return (raw - raw.mean()) / raw.std(), float(raw.std())


def run(values, group_option, prompt_variation, model_id, excluded):
    """The matrix get_filtered_matrix returns from a folder that holds these intensities."""
    return run_all([[experiment(group_option, prompt_variation, model_id, values)]], [[0, group_option, prompt_variation, model_id, excluded]])[0]["matrix"]


def run_all(folders, calls):
    return filtered_matrices(folders, [[f, g, pv, m, set(excluded)] for f, g, pv, m, excluded in calls])


def assert_close(actual, expected, spread):
    actual = _asarray(actual, dtype=float)
    assert actual.shape == expected.shape
    worst = float(_max(_abs(actual - expected)))
    assert worst <= 0.03 / spread, (worst, 0.03 / spread)


def religion_values(seed, **kw):
    return empathy_data.make_intensities(RELIGION, empathy_data.same_label, seed, **kw)


@pytest.fixture(scope="module")
def shared():
    """One religion folder's intensities (origin, llama-8b) for the tests that only read it: (values, excluded)."""
    values = religion_values(21)
    return values, empathy_data.excluded_ids(RELIGION, values)


CASES = json.loads((FIXTURES / "filtered_matrices.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_the_recorded_reference(case):
    groups = GROUPS[case["group_option"]]
    values = empathy_data.make_intensities(groups, empathy_data.same_label, case["seed"], scale=case["scale"])
    excluded = empathy_data.excluded_ids(groups, values)
    assert len(excluded) == case["n_excluded"]
    _, spread = oracle(groups, values, excluded)
    got = run(values, case["group_option"], case["prompt_variation"], case["model_id"], excluded)
    assert_close(got, np.array(case["matrix"]), spread)


def test_matches_the_normalized_emotion_matrix(shared):
    values, excluded = shared
    expected, spread = oracle(RELIGION, values, excluded)
    assert_close(run(values, "religion", "origin", "llama-8b", set(excluded)), expected, spread)


def test_returns_a_square_float_array_over_the_group_identities(shared):
    values, excluded = shared
    got = run(values, "religion", "origin", "llama-8b", set(excluded))
    assert isinstance(got, np.ndarray)
    assert got.shape == (len(RELIGION), len(RELIGION))
    assert got.dtype.kind == "f"


def test_is_standardized_over_all_cells(shared):
    values, excluded = shared
    got = _asarray(run(values, "religion", "origin", "llama-8b", set(excluded)), dtype=float)
    assert abs(float(got.mean())) < 1e-9
    assert abs(float(got.std()) - 1.0) < 1e-9  # population standard deviation


def test_rows_are_perceivers_and_columns_experiencers():
    # only the perceiver changes the intensities here: rows must differ, columns hardly
    values = religion_values(24, perceiver_sd=10.0, experiencer_sd=0.0, bonus=0.0)
    got = _asarray(run(values, "religion", "origin", "llama-8b", empathy_data.excluded_ids(RELIGION, values)), dtype=float)
    expected, _ = oracle(RELIGION, values, empathy_data.excluded_ids(RELIGION, values))
    assert np.argsort(got.mean(axis=1)).tolist() == np.argsort(expected.mean(axis=1)).tolist()
    assert got.mean(axis=1).std() > 5 * got.mean(axis=0).std()


def test_excluded_narratives_do_not_count():
    values = religion_values(25)
    excluded = empathy_data.excluded_ids(RELIGION, values)
    changed = {}
    rows = sorted(excluded)
    for pair, v in values.items():
        w = v.copy()
        valid = w[rows] >= 0
        w[np.array(rows)[valid]] = 100 - w[np.array(rows)[valid]]  # other answers where nobody refused
        changed[pair] = w
    assert empathy_data.excluded_ids(RELIGION, changed) == excluded
    folders = [[experiment("religion", "origin", "llama-8b", values)], [experiment("religion", "origin", "llama-8b", changed)]]
    got = run_all(folders, [[0, "religion", "origin", "llama-8b", excluded], [1, "religion", "origin", "llama-8b", excluded]])
    first = _asarray(got[0]["matrix"], dtype=float)
    second = _asarray(got[1]["matrix"], dtype=float)
    assert float(_max(_abs(first - second))) < 1e-9


def test_no_refusals_and_no_exclusions():
    values = religion_values(26, refusals=False)
    expected, spread = oracle(RELIGION, values, set())
    assert_close(run(values, "religion", "origin", "llama-8b", set()), expected, spread)


def test_reads_the_files_of_the_given_prompt_variation_and_model():
    configs = [("origin", "llama-8b", 27), ("origin", "qwen", 28), ("persona-3", "llama-8b", 29)]  # one folder, three experiments
    folders = {}
    for prompt_variation, model_id, seed in configs:
        folders[(prompt_variation, model_id)] = religion_values(seed)
    one_folder = [experiment("religion", prompt_variation, model_id, values) for (prompt_variation, model_id), values in folders.items()]
    calls = [[0, "religion", prompt_variation, model_id, empathy_data.excluded_ids(RELIGION, values)] for (prompt_variation, model_id), values in folders.items()]
    got = run_all([one_folder], calls)
    for ((prompt_variation, model_id), values), answer in zip(folders.items(), got):
        excluded = empathy_data.excluded_ids(RELIGION, values)
        expected, spread = oracle(RELIGION, values, excluded)
        assert_close(answer["matrix"], expected, spread)


def test_leaves_the_excluded_set_unchanged(shared):
    # the candidate's own report of the set after the call; the matrices above are the anchor
    values, excluded = shared
    given = set(excluded)
    got = run_all([[experiment("religion", "origin", "llama-8b", values)]], [[0, "religion", "origin", "llama-8b", given]])
    assert got[0]["excluded"] == excluded
