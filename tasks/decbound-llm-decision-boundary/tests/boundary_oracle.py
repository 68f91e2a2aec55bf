"""The tests' own account of the decision-boundary probe (ours, not upstream code; it runs
only in the tests' process, never in the candidate's).

Written from the task's contract: the grid over the in-context points' range widened by 1,
each grid point written as two integers truncated toward zero, the prompts of the released
pipeline's format (the in-context examples with their coordinates rounded, then the query),
the model's greedy next token after the whole prompt, and the label read from that token
(the class whose name its text contains, first class first), else from the two classes'
scores (the larger next-token logit of the last token of the name, bare and after a space;
ties to the first class). The model is run on each whole prompt, without a key/value
cache, in float32 as the model computes, and its logits compared in float64.

Every point also gets a `clear` flag: its greedy token wins by more than MARGIN and, where
the scores decide, they differ by more than MARGIN, so rounding differences between ways of
running the model (a cache, a batch) cannot change the label there. Tests compare only
clear points and check that nearly all points are clear.
"""
import math

import numpy as np
import torch
from sklearn.datasets import make_circles, make_classification, make_moons

MARGIN = 1e-3
QUERY = "What is the label for this input?"
EXPERIMENTS = {
    "foobar": ["Foo", "Bar"],
    "01": ["0", "1"],
    "AandB": ["A", "B"],
    "reverse_foobar": ["Bar", "Foo"],
    "PosNeg": ["Positive", "Negative"],
    "yesno": ["Yes", "No"],
}


def system_prompt(names):
    return (
        "Given pairs of numbers and their labels, predict the label for a new input pair of numbers "
        "based on the provided data. Answer with only one of the labels '%s' and '%s'." % (names[0], names[1])
    )


def context_set(kind, seed, n):
    """n in-context points (n/2 per class, shuffled) of a task drawn as the pipeline draws
    one: a scikit-learn data set rescaled per feature to [0, 100]; labels as floats."""
    if kind == "linear":
        X, y = make_classification(n_samples=200, n_features=2, n_informative=2, n_redundant=0,
                                   n_clusters_per_class=1, flip_y=0, random_state=seed, class_sep=1.0)
    elif kind == "moon":
        X, y = make_moons(n_samples=200, noise=0.05, random_state=seed)
    else:
        X, y = make_circles(n_samples=200, noise=0.05, random_state=seed, factor=0.5)
    X = 100.0 * (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    chosen = np.concatenate([np.flatnonzero(y == 0)[: n // 2], np.flatnonzero(y == 1)[: n // 2]])
    np.random.RandomState(seed).shuffle(chosen)
    return X[chosen], y[chosen].astype(np.float64)


def grid(X, size):
    """(xx1, xx2): the first feature along columns, the second along rows."""
    first = np.linspace(X[:, 0].min() - 1.0, X[:, 0].max() + 1.0, size)
    second = np.linspace(X[:, 1].min() - 1.0, X[:, 1].max() + 1.0, size)
    xx1 = np.tile(first, (size, 1))
    xx2 = np.tile(second[:, None], (1, size))
    return xx1, xx2


def point_text(a, b):
    return "%d %d" % (math.trunc(a), math.trunc(b))


def examples_text(X, y, names):
    parts = []
    for row, label in zip(X, y):
        coords = " ".join(str(int(v)) for v in np.round(row))
        parts.append("Input: %s\nLabel: %s\n" % (coords, names[int(label)]))
    return "".join(parts)


def prompt_text(model_name, system, examples, query, point):
    if "instruct" in model_name:
        head = "### Instructions:\n%s\n### Input:\n%s\n%s\n" % (system, examples, query)
        return head + "Input: %s\n### Response:\nLabel: " % point
    return "%s\n%s\n%s\nInput: %s\nLabel: " % (system, examples, query, point)


def label_token_ids(tokenizer, name):
    """The last token of the name encoded on its own and after a space."""
    return [tokenizer(name)["input_ids"][-1], tokenizer(" " + name)["input_ids"][-1]]


def next_logits(model, tokenizer, text):
    ids = torch.tensor([tokenizer(text)["input_ids"]])
    with torch.no_grad():
        return model(input_ids=ids).logits[0, -1].double()


def answer_text(logits, tokenizer):
    """The text of the greedy next token, special tokens dropped."""
    return tokenizer.decode([int(torch.argmax(logits))], skip_special_tokens=True)


def read_label(logits, tokenizer, names):
    """(label, how, clear) for one point from its next-token logits."""
    top = torch.topk(logits, 2)
    text = answer_text(logits, tokenizer).lower()
    scores = [max(float(logits[i]) for i in label_token_ids(tokenizer, name)) for name in names]
    clear = float(top.values[0] - top.values[1]) > MARGIN
    if names[0].lower() in text:
        return 0, "text", clear
    if names[1].lower() in text:
        return 1, "text", clear
    clear = clear and abs(scores[1] - scores[0]) > MARGIN
    return (1 if scores[1] > scores[0] else 0), "scores", clear


def boundary(model, tokenizer, X, y, names, size, model_name, query=QUERY, write=point_text):
    """Everything the tests expect for one probe: the grid, each point's label, how it was
    read and whether it is clear, and the logits (for the coverage checks)."""
    xx1, xx2 = grid(X, size)
    system = system_prompt(names)
    examples = examples_text(X, y, names)
    labels, hows, clear, logits = [], [], [], []
    for a, b in zip(xx1.ravel(), xx2.ravel()):
        lg = next_logits(model, tokenizer, prompt_text(model_name, system, examples, query, write(a, b)))
        label, how, ok = read_label(lg, tokenizer, names)
        labels.append(label)
        hows.append(how)
        clear.append(ok)
        logits.append(lg)
    shape = xx1.shape
    return {
        "xx1": xx1, "xx2": xx2,
        "labels": np.array(labels).reshape(shape), "how": np.array(hows).reshape(shape),
        "clear": np.array(clear).reshape(shape), "logits": logits,
    }
