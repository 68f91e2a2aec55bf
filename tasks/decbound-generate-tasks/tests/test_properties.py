"""Property tests for generate_tasks (data_utils.py).

generate_tasks stacks num_tasks synthetic binary classification data sets; task i is drawn
by a scikit-learn generator with random_state = seed + i and rescaled per feature to
[0, 100]. The oracle below is written here from that contract, straight on scikit-learn
(it does not call the workspace's generate_x_y); the other tests check properties that do
not depend on the exact draws: the layout, the seeding (shifting the seed shifts the tasks,
fewer tasks give a prefix, numpy's global generator is neither used nor advanced), the
defaults, which option each data type reads, the [0, 100] range and the labels.

generate_tasks runs in the candidate process (lmr_bridge); its arrays come back as plain
data. The tests on random states use probes, since those states live in the candidate.
"""
import numpy as np
import pytest
from lmr_bridge import candidate, probe
from sklearn.datasets import make_circles, make_classification, make_moons

_allclose = np.allclose
_array_equal = np.array_equal

generate_tasks = candidate.function("data_utils:generate_tasks")


def oracle_task(n, d, seed, data_type, factor, class_sep):
    """One task as the contract defines it: the generator call with random_state=seed, then
    every feature rescaled to span [0, 100]."""
    if data_type == "linear":
        X, y = make_classification(
            n_samples=n, n_features=d, n_informative=d, n_redundant=0, n_clusters_per_class=1,
            flip_y=0, shuffle=True, random_state=seed, n_classes=2, class_sep=class_sep,
        )
    elif data_type == "circle":
        X, y = make_circles(n_samples=n, shuffle=True, noise=0.05, random_state=seed, factor=factor)
    else:
        X, y = make_moons(n_samples=n, shuffle=True, noise=0.05, random_state=seed)
    lo, hi = X.min(axis=0), X.max(axis=0)
    return 100.0 * (X - lo) / (hi - lo), y


# (num_tasks, num_samples_per_task, num_dimensions, seed, data_type, factor, class_sep)
CASES = [
    (3, 16, 2, 0, "linear", 0.5, 2),
    (2, 11, 2, 9, "linear", 0.5, 1.0),
    (2, 14, 4, 3, "linear", 0.5, 0.75),
    (3, 12, 2, 4, "circle", 0.5, 2),
    (2, 17, 2, 30, "circle", 0.25, 2),
    (3, 12, 2, 4, "moon", 0.5, 2),
    (2, 21, 2, 77, "moon", 0.5, 1.0),
]
CASE_IDS = ["%s-T%d-n%d-d%d-seed%d" % (c[4], c[0], c[1], c[2], c[3]) for c in CASES]


def call(case):
    T, n, d, seed, data_type, factor, class_sep = case
    return generate_tasks(T, n, d, seed, data_type=data_type, factor=factor, class_sep=class_sep)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_returns_a_tuple_of_float64_arrays_in_the_task_layout(case):
    T, n, d = case[:3]
    out = call(case)
    assert type(out) is tuple and len(out) == 2
    X, Y = out
    assert isinstance(X, np.ndarray) and isinstance(Y, np.ndarray)
    assert X.shape == (T, n, d) and Y.shape == (T, n)
    assert X.dtype == np.float64 and Y.dtype == np.float64


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_each_task_is_the_generator_output_for_seed_plus_its_index(case):
    T, n, d, seed, data_type, factor, class_sep = case
    X, Y = call(case)
    for i in range(T):
        ox, oy = oracle_task(n, d, seed + i, data_type, factor, class_sep)
        assert _allclose(X[i], ox, rtol=1e-9, atol=1e-9), "task %d points" % i
        assert _array_equal(Y[i], oy), "task %d labels" % i


@pytest.mark.parametrize("data_type", ["linear", "circle", "moon"])
def test_task_i_equals_a_single_task_drawn_with_seed_plus_i(data_type):
    X, Y = generate_tasks(4, 15, 2, 20, data_type=data_type)
    for i in range(4):
        Xi, Yi = generate_tasks(1, 15, 2, 20 + i, data_type=data_type)
        assert _array_equal(X[i], Xi[0]) and _array_equal(Y[i], Yi[0]), "task %d" % i


@pytest.mark.parametrize("data_type", ["linear", "circle", "moon"])
def test_fewer_tasks_give_a_prefix_of_more_tasks(data_type):
    X5, Y5 = generate_tasks(5, 12, 2, 6, data_type=data_type)
    X2, Y2 = generate_tasks(2, 12, 2, 6, data_type=data_type)
    assert _array_equal(X5[:2], X2) and _array_equal(Y5[:2], Y2)


@pytest.mark.parametrize("data_type", ["linear", "circle", "moon"])
def test_tasks_of_one_call_are_different_data_sets(data_type):
    X, _ = generate_tasks(3, 16, 2, 1, data_type=data_type)
    assert not _allclose(X[0], X[1]) and not _allclose(X[1], X[2])


def test_the_same_call_gives_the_same_tasks():
    a = generate_tasks(3, 16, 2, 13, data_type="moon")
    b = generate_tasks(3, 16, 2, 13, data_type="moon")
    assert _array_equal(a[0], b[0]) and _array_equal(a[1], b[1])


@probe
def after_two_global_seeds():
    """In the candidate: the same call after numpy's global generator was seeded two ways."""
    import numpy as np
    from data_utils import generate_tasks

    np.random.seed(1)
    a = generate_tasks(3, 16, 2, 5, data_type="linear", class_sep=1.0)
    np.random.seed(987654)
    np.random.rand(17)
    b = generate_tasks(3, 16, 2, 5, data_type="linear", class_sep=1.0)
    return [a, b]


def test_result_does_not_depend_on_numpys_global_random_state():
    a, b = after_two_global_seeds()
    assert _array_equal(a[0], b[0]) and _array_equal(a[1], b[1])


@probe
def random_states_around_a_call(data_type):
    """In the candidate: numpy's global state and Python's random state before and after a call."""
    import random

    import numpy as np
    from data_utils import generate_tasks

    np.random.seed(123)
    numpy_before = np.random.get_state()
    python_before = random.getstate()
    generate_tasks(3, 16, 2, 0, data_type=data_type)
    return {"numpy_before": numpy_before, "numpy_after": np.random.get_state(), "python_before": python_before, "python_after": random.getstate()}


@pytest.mark.parametrize("data_type", ["linear", "circle", "moon"])
def test_numpys_global_random_state_is_left_unchanged(data_type):
    # the caller seeds numpy's generator first and shuffles with it after (generate_dataset);
    # the states are the candidate's own report, the tasks checked above are the anchor
    got = random_states_around_a_call(data_type)
    before, after = got["numpy_before"], got["numpy_after"]
    assert after[0] == before[0] and _array_equal(after[1], before[1]) and after[2:] == before[2:]
    assert got["python_after"] == got["python_before"]


def test_default_class_sep_is_two():
    default = generate_tasks(2, 16, 2, 3)
    two = generate_tasks(2, 16, 2, 3, data_type="linear", class_sep=2)
    one = generate_tasks(2, 16, 2, 3, data_type="linear", class_sep=1)
    assert _array_equal(default[0], two[0]) and _array_equal(default[1], two[1])
    assert not _allclose(default[0], one[0])


def test_default_data_type_is_linear():
    default = generate_tasks(2, 16, 3, 8, class_sep=1.5)
    linear = generate_tasks(2, 16, 3, 8, data_type="linear", class_sep=1.5)
    assert _array_equal(default[0], linear[0]) and _array_equal(default[1], linear[1])


def test_default_circle_factor_is_one_half():
    default = generate_tasks(2, 16, 2, 3, data_type="circle")
    half = generate_tasks(2, 16, 2, 3, data_type="circle", factor=0.5)
    other = generate_tasks(2, 16, 2, 3, data_type="circle", factor=0.2)
    assert _array_equal(default[0], half[0]) and _array_equal(default[1], half[1])
    assert not _allclose(default[0], other[0])


def test_class_sep_changes_linear_data():
    a = generate_tasks(2, 16, 2, 4, data_type="linear", class_sep=0.5)
    b = generate_tasks(2, 16, 2, 4, data_type="linear", class_sep=3.0)
    assert not _allclose(a[0], b[0])


@pytest.mark.parametrize("data_type", ["circle", "moon"])
def test_class_sep_does_not_change_circle_or_moon_data(data_type):
    a = generate_tasks(2, 16, 2, 4, data_type=data_type, class_sep=0.5)
    b = generate_tasks(2, 16, 2, 4, data_type=data_type, class_sep=3.0)
    assert _array_equal(a[0], b[0]) and _array_equal(a[1], b[1])


@pytest.mark.parametrize("data_type", ["linear", "moon"])
def test_factor_does_not_change_linear_or_moon_data(data_type):
    a = generate_tasks(2, 16, 2, 4, data_type=data_type, factor=0.2)
    b = generate_tasks(2, 16, 2, 4, data_type=data_type, factor=0.8)
    assert _array_equal(a[0], b[0]) and _array_equal(a[1], b[1])


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_every_feature_of_every_task_spans_zero_to_one_hundred(case):
    X, _ = call(case)
    assert _allclose(X.min(axis=1), 0.0, atol=1e-9)
    assert _allclose(X.max(axis=1), 100.0, atol=1e-9)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_labels_are_zero_or_one_with_both_classes_of_near_equal_size(case):
    n = case[1]
    _, Y = call(case)
    assert set(np.unique(Y).tolist()) <= {0.0, 1.0}
    ones = Y.sum(axis=1)
    assert np.all(np.abs(2 * ones - n) <= 1)


def test_linear_data_in_more_than_two_dimensions():
    X, Y = generate_tasks(2, 24, 6, 10, data_type="linear", class_sep=1.0)
    assert X.shape == (2, 24, 6) and Y.shape == (2, 24)
    for i in range(2):
        ox, oy = oracle_task(24, 6, 10 + i, "linear", 0.5, 1.0)
        assert _allclose(X[i], ox, rtol=1e-9, atol=1e-9) and _array_equal(Y[i], oy)


@pytest.mark.parametrize("data_type", ["linear", "circle", "moon"])
def test_no_task_gives_empty_arrays_of_the_right_shape(data_type):
    X, Y = generate_tasks(0, 16, 2, 0, data_type=data_type)
    assert X.shape == (0, 16, 2) and Y.shape == (0, 16)
    assert X.dtype == np.float64 and Y.dtype == np.float64


def test_arguments_by_keyword():
    X, Y = generate_tasks(
        num_tasks=2, num_samples_per_task=10, num_dimensions=2, seed=50, data_type="circle", factor=0.4, class_sep=1.0
    )
    ox, oy = oracle_task(10, 2, 51, "circle", 0.4, 1.0)
    assert _allclose(X[1], ox, rtol=1e-9, atol=1e-9) and _array_equal(Y[1], oy)
