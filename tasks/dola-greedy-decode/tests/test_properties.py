"""Property tests for DoLa greedy decoding (GenerationMixin.dola_contrast, reached
through dola_greedy_decode, and GenerationMixin.relative_top_filter), from the paper's
definition and the instruction's contract, on the tiny seeded LLaMA of tiny_llama.py,
called as DoLa's scripts call it (`model.generate(..., dola_decoding=True, ...)`, batch
of one).

The oracle below is written from the paper (Section 2): at each step it reruns the model on
the whole prefix (no cache) to get the early-exit next-token distributions, in float64,
keeps the tokens of the mature layer's plausible set (alpha times its top probability),
picks the candidate layer whose distribution diverges most from the mature layer's (by the
divergence the instruction states), scores kept tokens by the log-ratio of the two
distributions (minus infinity elsewhere), applies the repetition penalty to the contrasted
scores and takes the argmax. It is run along the implementation's own output, step by step.
"""
import functools
import math

import numpy as np
import pytest
import torch

_allclose = np.allclose  # bound before the code under test is imported

import tiny_llama  # noqa: E402

ATOL = 1e-4
RTOL = 1e-4


def generate(model, ids, n, **kw):
    with torch.no_grad():
        return model.generate(ids, max_new_tokens=n, dola_decoding=True, output_scores=True,
                              return_dict_in_generate=True, **kw)


def early_exit(model, prefix, layers):
    with torch.no_grad():
        logits, _ = model(input_ids=prefix, early_exit_layers=sorted(set(layers)))
    return {l: logits[l][0, -1].double() for l in layers}


def divergence(p, q):
    """The layer-selection divergence the instruction states: with m the mixture of p and q,
    the average of KL(m || p) and KL(m || q) (the released code's form of the paper's JSD)."""
    m = 0.5 * (p + q)
    return 0.5 * (m * (m / p).log()).sum() + 0.5 * (m * (m / q).log()).sum()


def oracle_step(model, prefix, mature, candidates, alpha, penalty=1.0):
    """(score vector, chosen premature layer) for the next token after `prefix` (1, t)."""
    logits = early_exit(model, prefix, candidates + [mature])
    log_n = torch.log_softmax(logits[mature], -1)
    q_n = log_n.exp()
    if len(candidates) == 1:
        chosen = candidates[0]
    else:
        divs = [divergence(q_n, torch.softmax(logits[j], -1)).item() for j in candidates]
        chosen = candidates[int(np.argmax(divs))]
    log_m = torch.log_softmax(logits[chosen], -1)
    score = log_n - log_m
    if alpha > 0:
        score[q_n < alpha * q_n.max()] = -math.inf
    if penalty != 1.0:
        for tok in set(prefix[0].tolist()):
            s = score[tok]
            score[tok] = s * penalty if s < 0 else s / penalty
    return score, chosen


def along_output(model, out, n_prompt, mature, candidates, alpha, penalty=1.0):
    """The oracle's scores, choices and argmax tokens at each step of the implementation's output."""
    seq = out.sequences
    steps = []
    for t in range(n_prompt, seq.shape[1]):
        score, chosen = oracle_step(model, seq[:, :t], mature, candidates, alpha, penalty)
        steps.append((score, chosen, int(score.argmax())))
    return steps


DYNAMIC = [
    dict(model_seed=0, prompt_seed=11, prompt_len=6, mature=4, candidates=[0, 1, 2, 3], alpha=0.1, penalty=1.2),
    dict(model_seed=1, prompt_seed=12, prompt_len=5, mature=4, candidates=[0, 2], alpha=0.1, penalty=1.0),
    dict(model_seed=2, prompt_seed=13, prompt_len=7, mature=4, candidates=[1, 2, 3], alpha=0.25, penalty=1.0),
    dict(model_seed=3, prompt_seed=14, prompt_len=4, mature=3, candidates=[0, 1, 2], alpha=0.05, penalty=1.3),
    dict(model_seed=4, prompt_seed=15, prompt_len=6, mature=4, candidates=[3, 2, 1, 0], alpha=0.1, penalty=1.0),
]
STATIC = [
    dict(model_seed=0, prompt_seed=21, prompt_len=6, mature=4, base=2, alpha=0.1, penalty=1.0),
    dict(model_seed=2, prompt_seed=22, prompt_len=5, mature=4, base=0, alpha=0.1, penalty=1.2),
    dict(model_seed=3, prompt_seed=23, prompt_len=6, mature=4, base=3, alpha=0.3, penalty=1.0),
]
N_NEW = 8


@functools.lru_cache(maxsize=None)
def _dynamic(i):
    return _run_dynamic(DYNAMIC[i])


@functools.lru_cache(maxsize=None)
def _static(i):
    return _run_static(STATIC[i])


def run_dynamic(c):
    """One decoding run of a DYNAMIC case and the oracle along it (computed once per case)."""
    return _dynamic(DYNAMIC.index(c))


def run_static(c):
    return _static(STATIC.index(c))


def _run_dynamic(c):
    model = tiny_llama.make_model(c["model_seed"])
    ids = tiny_llama.prompt(c["prompt_seed"], c["prompt_len"])
    out = generate(model, ids, N_NEW, mature_layer=c["mature"], candidate_premature_layers=c["candidates"],
                   relative_top=c["alpha"], repetition_penalty=c["penalty"])
    steps = along_output(model, out, ids.shape[1], c["mature"], c["candidates"], c["alpha"], c["penalty"])
    return model, ids, out, steps


def _run_static(c):
    model = tiny_llama.make_model(c["model_seed"])
    ids = tiny_llama.prompt(c["prompt_seed"], c["prompt_len"])
    out = generate(model, ids, N_NEW, mature_layer=c["mature"], base_layer=c["base"],
                   relative_top=c["alpha"], repetition_penalty=c["penalty"])
    steps = along_output(model, out, ids.shape[1], c["mature"], [c["base"]], c["alpha"], c["penalty"])
    return model, ids, out, steps


def assert_scores_equal(got, want, step):
    got = got.double()
    inf_got = torch.isinf(got) & (got < 0)
    inf_want = torch.isinf(want) & (want < 0)
    assert torch.equal(inf_got, inf_want), f"step {step}: the tokens scored -inf differ from the implausible tokens"
    keep = ~inf_want
    assert _allclose(got[keep].numpy(), want[keep].numpy(), rtol=RTOL, atol=ATOL), f"step {step}: contrasted scores differ"


@pytest.mark.parametrize("c", DYNAMIC, ids=[f"dynamic{i}" for i in range(len(DYNAMIC))])
def test_dynamic_tokens_are_argmax_of_oracle(c):
    _, ids, out, steps = run_dynamic(c)
    assert out.sequences[0, ids.shape[1]:].tolist() == [tok for _, _, tok in steps]


@pytest.mark.parametrize("c", DYNAMIC, ids=[f"dynamic{i}" for i in range(len(DYNAMIC))])
def test_dynamic_scores_equal_oracle(c):
    _, _, out, steps = run_dynamic(c)
    assert len(out.scores) == len(steps)
    for i, (got, (want, _, _)) in enumerate(zip(out.scores, steps)):
        assert_scores_equal(got[0], want, i)


@pytest.mark.parametrize("c", DYNAMIC, ids=[f"dynamic{i}" for i in range(len(DYNAMIC))])
def test_premature_layer_dist_counts_the_jsd_choices(c):
    _, _, out, steps = run_dynamic(c)
    want = {l: 0 for l in c["candidates"]}
    for _, chosen, _ in steps:
        want[chosen] += 1
    assert dict(out.premature_layer_dist) == want


@pytest.mark.parametrize("c", STATIC, ids=[f"static{i}" for i in range(len(STATIC))])
def test_static_scores_equal_oracle(c):
    _, ids, out, steps = run_static(c)
    assert out.sequences[0, ids.shape[1]:].tolist() == [tok for _, _, tok in steps]
    for i, (got, (want, _, _)) in enumerate(zip(out.scores, steps)):
        assert_scores_equal(got[0], want, i)


def test_static_mode_leaves_premature_layer_dist_empty():
    c = STATIC[0]
    _, _, out, _ = run_static(c)
    assert dict(out.premature_layer_dist) == {}


@pytest.mark.parametrize("layer", [0, 1, 2, 3])
def test_single_candidate_equals_static_contrast(layer):
    model = tiny_llama.make_model(5)
    ids = tiny_llama.prompt(31, 6)
    dyn = generate(model, ids, N_NEW, mature_layer=4, candidate_premature_layers=[layer], relative_top=0.1)
    sta = generate(model, ids, N_NEW, mature_layer=4, base_layer=layer, relative_top=0.1)
    assert dyn.sequences.tolist() == sta.sequences.tolist()
    for a, b in zip(dyn.scores, sta.scores):
        assert_scores_equal(a[0], b[0].double(), 0)


def test_single_candidate_is_chosen_at_every_step():
    model = tiny_llama.make_model(5)
    ids = tiny_llama.prompt(32, 6)
    out = generate(model, ids, N_NEW, mature_layer=4, candidate_premature_layers=[2], relative_top=0.1)
    assert dict(out.premature_layer_dist) == {2: out.sequences.shape[1] - ids.shape[1]}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_one_reduces_to_greedy_decoding_of_the_final_layer(seed):
    # with alpha = 1 only the mature layer's top token is plausible, so DoLa decodes greedily
    model = tiny_llama.make_model(seed)
    ids = tiny_llama.prompt(40 + seed, 5)
    out = generate(model, ids, N_NEW, mature_layer=4, candidate_premature_layers=[0, 1, 2, 3], relative_top=1.0)
    with torch.no_grad():
        plain = model.generate(ids, max_new_tokens=N_NEW, do_sample=False)
    assert out.sequences.tolist() == plain.tolist()


@pytest.mark.parametrize("seed", [0, 3])
def test_without_constraint_tokens_are_argmax_of_log_ratio(seed):
    # relative_top = 0 switches the plausibility constraint off: every token is scored
    c = dict(mature=4, candidates=[0, 1, 2, 3])
    model = tiny_llama.make_model(seed)
    ids = tiny_llama.prompt(50 + seed, 6)
    out = generate(model, ids, N_NEW, mature_layer=4, candidate_premature_layers=c["candidates"], relative_top=0.0)
    steps = along_output(model, out, ids.shape[1], c["mature"], c["candidates"], 0.0)
    assert out.sequences[0, ids.shape[1]:].tolist() == [tok for _, _, tok in steps]


@pytest.mark.parametrize("seed", [0, 3])
def test_without_constraint_scores_are_log_ratio_up_to_a_constant(seed):
    c = dict(mature=4, candidates=[0, 1, 2, 3])
    model = tiny_llama.make_model(seed)
    ids = tiny_llama.prompt(50 + seed, 6)
    out = generate(model, ids, N_NEW, mature_layer=4, candidate_premature_layers=c["candidates"], relative_top=0.0)
    steps = along_output(model, out, ids.shape[1], c["mature"], c["candidates"], 0.0)
    for i, (got, (want, _, _)) in enumerate(zip(out.scores, steps)):
        diff = (got[0].double() - want).numpy()
        assert np.all(np.isfinite(diff)), f"step {i}: a token was filtered with relative_top = 0"
        assert _allclose(diff, diff.mean(), rtol=0, atol=ATOL), f"step {i}: scores are not the log-ratio up to a constant"


def test_repetition_penalty_acts_on_the_contrasted_scores():
    model = tiny_llama.make_model(1)
    ids = tiny_llama.prompt(60, 8)
    kw = dict(mature_layer=4, candidate_premature_layers=[0, 1, 2, 3], relative_top=0.2)
    plain = generate(model, ids, 1, **kw).scores[0][0].double()
    pen = generate(model, ids, 1, repetition_penalty=1.5, **kw).scores[0][0].double()
    want = plain.clone()
    for tok in set(ids[0].tolist()):
        if not math.isinf(want[tok]):
            want[tok] = want[tok] * 1.5 if want[tok] < 0 else want[tok] / 1.5
    assert_scores_equal(pen, want, 0)


def test_greedy_token_is_plausible_at_every_step():
    model = tiny_llama.make_model(6)
    ids = tiny_llama.prompt(70, 6)
    out = generate(model, ids, N_NEW, mature_layer=4, candidate_premature_layers=[0, 1, 2, 3], relative_top=0.3)
    for t in range(ids.shape[1], out.sequences.shape[1]):
        q_n = torch.softmax(early_exit(model, out.sequences[:, :t], [4])[4], -1)
        tok = out.sequences[0, t]
        assert q_n[tok] >= 0.3 * q_n.max() * (1 - 1e-5)


# relative_top_filter: the adaptive plausibility constraint on a batch of score rows

@functools.lru_cache(maxsize=None)
def _any_model():
    return tiny_llama.make_model(0)


def filt(scores, *args, **kw):
    return _any_model().relative_top_filter(scores, *args, **kw)


def score_rows(seed, rows=3, vocab=48, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return scale * torch.randn(rows, vocab, generator=g)


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.5])
def test_filter_keeps_log_probabilities_of_plausible_tokens(alpha):
    x = score_rows(1)
    out = filt(x.clone(), alpha)
    lp = torch.log_softmax(x.double(), -1)
    keep = lp >= lp.max(-1, keepdim=True).values + math.log(alpha)
    assert _allclose(out.double()[keep].numpy(), lp[keep].numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.5])
def test_filter_sets_exactly_the_implausible_tokens_to_minus_inf(alpha):
    x = score_rows(2)
    out = filt(x.clone(), alpha)
    p = torch.softmax(x.double(), -1)
    implausible = p < alpha * p.max(-1, keepdim=True).values
    assert torch.equal(torch.isinf(out) & (out < 0), implausible)


def test_filter_uses_the_given_filter_value():
    x = score_rows(3)
    out = filt(x.clone(), 0.1, filter_value=-1000.0)
    p = torch.softmax(x.double(), -1)
    implausible = p < 0.1 * p.max(-1, keepdim=True).values
    assert bool((out[implausible] == -1000.0).all()) and bool(torch.isfinite(out).all())


def test_filter_keeps_at_least_min_tokens_to_keep():
    x = score_rows(4, scale=6.0)
    out = filt(x.clone(), 0.5, min_tokens_to_keep=5)
    kept = (~(torch.isinf(out) & (out < 0))).sum(-1)
    top5 = x.topk(5, -1).indices
    assert bool((kept >= 5).all())
    assert bool(torch.isfinite(out.gather(-1, top5)).all())


def test_filter_rows_are_independent():
    x = score_rows(5)
    whole = filt(x.clone(), 0.1)
    for i in range(x.shape[0]):
        row = filt(x[i:i + 1].clone(), 0.1)
        assert torch.equal(torch.isinf(row[0]), torch.isinf(whole[i]))
        assert _allclose(row[0][torch.isfinite(row[0])].numpy(), whole[i][torch.isfinite(whole[i])].numpy(), rtol=1e-6, atol=1e-6)


def test_filter_returns_same_shape_and_dtype():
    x = score_rows(6)
    out = filt(x.clone(), 0.1)
    assert out.shape == x.shape and out.dtype == x.dtype


def test_filter_leaves_its_input_unchanged():
    x = score_rows(7)
    before = x.clone()
    filt(x, 0.1)
    assert torch.equal(x, before)
