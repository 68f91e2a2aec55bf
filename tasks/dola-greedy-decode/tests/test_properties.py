"""Property tests for DoLa greedy decoding (GenerationMixin.dola_contrast, reached
through dola_greedy_decode, and GenerationMixin.relative_top_filter), from the paper's
definition and the instruction's contract, on the tiny seeded LLaMA of tiny_llama.py,
called as DoLa's scripts call it (`model.generate(..., dola_decoding=True, ...)`, batch
of one).

The oracle below is written from the paper (Section 2): at each step it takes the
early-exit next-token distributions of the whole prefix (the model rerun without the
cache), in float64, keeps the tokens of the mature layer's plausible set (alpha times its
top probability), picks the candidate layer whose distribution diverges most from the
mature layer's (by the divergence the instruction states), scores kept tokens by the
log-ratio of the two distributions (minus infinity elsewhere), applies the repetition
penalty to the contrasted scores and takes the argmax. It is run along the
implementation's own output, step by step.

Where the code runs: the model is the workspace's vendored transformers, which only the
candidate process imports. The probes below decode there and also send back the model's
early-exit logits at every prefix of the output (`LlamaForCausalLM.forward(...,
early_exit_layers=...)`, code the task does not mask). Everything DoLa does with those
logits (the filter, the divergence, the choice of layer, the contrast, the penalty) is
computed here, in this process, by the oracle below; the logits themselves rest on the
candidate's report, and test_replay.py anchors the same decoding to numbers recorded from
the reference. The prompts and the relative_top_filter inputs are made here.
"""
import functools
import math

import numpy as np
import pytest
import torch
from lmr_bridge import probe, probe_helper

ATOL = 1e-4
RTOL = 1e-4
VOCAB = 48  # tiny_llama.VOCAB
BOS = 1  # tiny_llama.BOS


def make_prompt(seed, length):
    """tiny_llama.prompt, written here: `length` ordinary tokens (ids 3..VOCAB-1) after BOS."""
    g = torch.Generator().manual_seed(seed)
    body = torch.randint(3, VOCAB, (1, length), generator=g)
    return [BOS] + body[0].tolist()


@probe_helper
def generate(model, ids, n, **kw):
    import torch

    with torch.no_grad():
        return model.generate(ids, max_new_tokens=n, dola_decoding=True, output_scores=True,
                              return_dict_in_generate=True, **kw)


@probe_helper
def early_exit(model, prefix, layers):
    """The early-exit next-token logits of `layers` after `prefix` (1, t), as float64."""
    import torch

    with torch.no_grad():
        logits, _ = model(input_ids=prefix, early_exit_layers=sorted(set(layers)))
    return {l: logits[l][0, -1].double() for l in layers}


@probe
def dola_run(model_seed, prompt, n, options, exit_layers):
    """In the candidate: one DoLa decoding run of the tiny model `model_seed` on `prompt`,
    and the model's early-exit logits of `exit_layers` at every step of its output."""
    import torch
    import tiny_llama

    model = tiny_llama.make_model(model_seed)
    ids = torch.tensor([prompt])
    out = generate(model, ids, n, **options)
    seq = out.sequences
    exits = [early_exit(model, seq[:, :t], exit_layers) for t in range(ids.shape[1], seq.shape[1])] if exit_layers else []
    scores = None if out.scores is None else list(out.scores)
    return {"sequences": seq, "scores": scores, "dist": out.premature_layer_dist, "exits": exits}


@probe
def dola_and_plain_greedy(model_seed, prompt, n, options):
    """In the candidate: a DoLa run and plain greedy decoding (generate's own) of the same model."""
    import torch
    import tiny_llama

    model = tiny_llama.make_model(model_seed)
    ids = torch.tensor([prompt])
    out = generate(model, ids, n, **options)
    with torch.no_grad():
        plain = model.generate(ids, max_new_tokens=n, do_sample=False)
    return {"dola": out.sequences, "plain": plain}


def divergence(p, q):
    """The layer-selection divergence the instruction states: with m the mixture of p and q,
    the average of KL(m || p) and KL(m || q) (the released code's form of the paper's JSD)."""
    m = 0.5 * (p + q)
    return 0.5 * (m * (m / p).log()).sum() + 0.5 * (m * (m / q).log()).sum()


def oracle_step(logits, prefix, mature, candidates, alpha, penalty=1.0):
    """(score vector, chosen premature layer) for the next token after `prefix` (a list of
    ids), from the early-exit logits `logits` ({layer: (vocab,) float64}) of that prefix."""
    log_n = torch.log_softmax(logits[mature].double(), -1)
    q_n = log_n.exp()
    if len(candidates) == 1:
        chosen = candidates[0]
    else:
        divs = [divergence(q_n, torch.softmax(logits[j].double(), -1)).item() for j in candidates]
        chosen = candidates[int(np.argmax(divs))]
    log_m = torch.log_softmax(logits[chosen].double(), -1)
    score = log_n - log_m
    if alpha > 0:
        score[q_n < alpha * q_n.max()] = -math.inf
    if penalty != 1.0:
        for tok in set(prefix):
            s = score[tok]
            score[tok] = s * penalty if s < 0 else s / penalty
    return score, chosen


def along_output(run, n_prompt, mature, candidates, alpha, penalty=1.0):
    """The oracle's scores, choices and argmax tokens at each step of the implementation's output."""
    seq = run["sequences"][0].tolist()
    assert len(run["exits"]) == len(seq) - n_prompt
    steps = []
    for t, logits in zip(range(n_prompt, len(seq)), run["exits"]):
        score, chosen = oracle_step(logits, seq[:t], mature, candidates, alpha, penalty)
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
    ids = make_prompt(c["prompt_seed"], c["prompt_len"])
    options = dict(mature_layer=c["mature"], candidate_premature_layers=c["candidates"],
                   relative_top=c["alpha"], repetition_penalty=c["penalty"])
    out = dola_run(c["model_seed"], ids, N_NEW, options, c["candidates"] + [c["mature"]])
    steps = along_output(out, len(ids), c["mature"], c["candidates"], c["alpha"], c["penalty"])
    return ids, out, steps


def _run_static(c):
    ids = make_prompt(c["prompt_seed"], c["prompt_len"])
    options = dict(mature_layer=c["mature"], base_layer=c["base"], relative_top=c["alpha"], repetition_penalty=c["penalty"])
    out = dola_run(c["model_seed"], ids, N_NEW, options, [c["base"], c["mature"]])
    steps = along_output(out, len(ids), c["mature"], [c["base"]], c["alpha"], c["penalty"])
    return ids, out, steps


def assert_scores_equal(got, want, step):
    got = got.double()
    inf_got = torch.isinf(got) & (got < 0)
    inf_want = torch.isinf(want) & (want < 0)
    assert torch.equal(inf_got, inf_want), f"step {step}: the tokens scored -inf differ from the implausible tokens"
    keep = ~inf_want
    assert np.allclose(got[keep].numpy(), want[keep].numpy(), rtol=RTOL, atol=ATOL), f"step {step}: contrasted scores differ"


@pytest.mark.parametrize("c", DYNAMIC, ids=[f"dynamic{i}" for i in range(len(DYNAMIC))])
def test_dynamic_tokens_are_argmax_of_oracle(c):
    ids, out, steps = run_dynamic(c)
    assert out["sequences"][0, len(ids):].tolist() == [tok for _, _, tok in steps]


@pytest.mark.parametrize("c", DYNAMIC, ids=[f"dynamic{i}" for i in range(len(DYNAMIC))])
def test_dynamic_scores_equal_oracle(c):
    _, out, steps = run_dynamic(c)
    assert len(out["scores"]) == len(steps)
    for i, (got, (want, _, _)) in enumerate(zip(out["scores"], steps)):
        assert_scores_equal(got[0], want, i)


@pytest.mark.parametrize("c", DYNAMIC, ids=[f"dynamic{i}" for i in range(len(DYNAMIC))])
def test_premature_layer_dist_counts_the_jsd_choices(c):
    _, out, steps = run_dynamic(c)
    want = {l: 0 for l in c["candidates"]}
    for _, chosen, _ in steps:
        want[chosen] += 1
    assert dict(out["dist"]) == want


@pytest.mark.parametrize("c", STATIC, ids=[f"static{i}" for i in range(len(STATIC))])
def test_static_scores_equal_oracle(c):
    ids, out, steps = run_static(c)
    assert out["sequences"][0, len(ids):].tolist() == [tok for _, _, tok in steps]
    for i, (got, (want, _, _)) in enumerate(zip(out["scores"], steps)):
        assert_scores_equal(got[0], want, i)


def test_static_mode_leaves_premature_layer_dist_empty():
    c = STATIC[0]
    _, out, _ = run_static(c)
    assert dict(out["dist"]) == {}


@pytest.mark.parametrize("layer", [0, 1, 2, 3])
def test_single_candidate_equals_static_contrast(layer):
    ids = make_prompt(31, 6)
    dyn = dola_run(5, ids, N_NEW, dict(mature_layer=4, candidate_premature_layers=[layer], relative_top=0.1), [])
    sta = dola_run(5, ids, N_NEW, dict(mature_layer=4, base_layer=layer, relative_top=0.1), [])
    assert dyn["sequences"].tolist() == sta["sequences"].tolist()
    for a, b in zip(dyn["scores"], sta["scores"]):
        assert_scores_equal(a[0], b[0].double(), 0)


def test_single_candidate_is_chosen_at_every_step():
    ids = make_prompt(32, 6)
    out = dola_run(5, ids, N_NEW, dict(mature_layer=4, candidate_premature_layers=[2], relative_top=0.1), [])
    assert dict(out["dist"]) == {2: out["sequences"].shape[1] - len(ids)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_one_reduces_to_greedy_decoding_of_the_final_layer(seed):
    # with alpha = 1 only the mature layer's top token is plausible, so DoLa decodes greedily
    ids = make_prompt(40 + seed, 5)
    got = dola_and_plain_greedy(seed, ids, N_NEW, dict(mature_layer=4, candidate_premature_layers=[0, 1, 2, 3], relative_top=1.0))
    assert got["dola"].tolist() == got["plain"].tolist()


@pytest.mark.parametrize("seed", [0, 3])
def test_without_constraint_tokens_are_argmax_of_log_ratio(seed):
    # relative_top = 0 switches the plausibility constraint off: every token is scored
    c = dict(mature=4, candidates=[0, 1, 2, 3])
    ids = make_prompt(50 + seed, 6)
    out = dola_run(seed, ids, N_NEW, dict(mature_layer=4, candidate_premature_layers=c["candidates"], relative_top=0.0),
                   c["candidates"] + [c["mature"]])
    steps = along_output(out, len(ids), c["mature"], c["candidates"], 0.0)
    assert out["sequences"][0, len(ids):].tolist() == [tok for _, _, tok in steps]


@pytest.mark.parametrize("seed", [0, 3])
def test_without_constraint_scores_are_log_ratio_up_to_a_constant(seed):
    c = dict(mature=4, candidates=[0, 1, 2, 3])
    ids = make_prompt(50 + seed, 6)
    out = dola_run(seed, ids, N_NEW, dict(mature_layer=4, candidate_premature_layers=c["candidates"], relative_top=0.0),
                   c["candidates"] + [c["mature"]])
    steps = along_output(out, len(ids), c["mature"], c["candidates"], 0.0)
    for i, (got, (want, _, _)) in enumerate(zip(out["scores"], steps)):
        diff = (got[0].double() - want).numpy()
        assert np.all(np.isfinite(diff)), f"step {i}: a token was filtered with relative_top = 0"
        assert np.allclose(diff, diff.mean(), rtol=0, atol=ATOL), f"step {i}: scores are not the log-ratio up to a constant"


def test_repetition_penalty_acts_on_the_contrasted_scores():
    ids = make_prompt(60, 8)
    kw = dict(mature_layer=4, candidate_premature_layers=[0, 1, 2, 3], relative_top=0.2)
    plain = dola_run(1, ids, 1, kw, [])["scores"][0][0].double()
    pen = dola_run(1, ids, 1, dict(kw, repetition_penalty=1.5), [])["scores"][0][0].double()
    want = plain.clone()
    for tok in set(ids):
        if not math.isinf(want[tok]):
            want[tok] = want[tok] * 1.5 if want[tok] < 0 else want[tok] / 1.5
    assert_scores_equal(pen, want, 0)


def test_greedy_token_is_plausible_at_every_step():
    ids = make_prompt(70, 6)
    out = dola_run(6, ids, N_NEW, dict(mature_layer=4, candidate_premature_layers=[0, 1, 2, 3], relative_top=0.3), [4])
    seq = out["sequences"][0].tolist()
    assert len(out["exits"]) == len(seq) - len(ids)
    for t, logits in zip(range(len(ids), len(seq)), out["exits"]):
        q_n = torch.softmax(logits[4].double(), -1)
        tok = seq[t]
        assert q_n[tok] >= 0.3 * q_n.max() * (1 - 1e-5)


# relative_top_filter: the adaptive plausibility constraint on a batch of score rows

@probe
def filtered(inputs, args, kwargs):
    """In the candidate: relative_top_filter(x, *args, **kwargs) of a tiny model for each x
    of `inputs`, and each x as the calls left it."""
    import tiny_llama

    model = tiny_llama.make_model(0)
    outs = [model.relative_top_filter(x, *args, **kwargs) for x in inputs]
    return {"out": outs, "inputs_after": inputs}


def filt(scores, *args, **kw):
    return filtered([scores], list(args), kw)["out"][0]


def score_rows(seed, rows=3, vocab=48, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return scale * torch.randn(rows, vocab, generator=g)


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.5])
def test_filter_keeps_log_probabilities_of_plausible_tokens(alpha):
    x = score_rows(1)
    out = filt(x.clone(), alpha)
    lp = torch.log_softmax(x.double(), -1)
    keep = lp >= lp.max(-1, keepdim=True).values + math.log(alpha)
    assert np.allclose(out.double()[keep].numpy(), lp[keep].numpy(), rtol=1e-5, atol=1e-5)


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
    got = filtered([x.clone()] + [x[i:i + 1].clone() for i in range(x.shape[0])], [0.1], {})["out"]
    whole = got[0]
    for i in range(x.shape[0]):
        row = got[1 + i]
        assert torch.equal(torch.isinf(row[0]), torch.isinf(whole[i]))
        assert np.allclose(row[0][torch.isfinite(row[0])].numpy(), whole[i][torch.isfinite(whole[i])].numpy(), rtol=1e-6, atol=1e-6)


def test_filter_returns_same_shape_and_dtype():
    x = score_rows(6)
    out = filt(x.clone(), 0.1)
    assert out.shape == x.shape and out.dtype == x.dtype


def test_filter_leaves_its_input_unchanged():
    x = score_rows(7)
    before = x.clone()
    got = filtered([x], [0.1], {})
    assert torch.equal(got["inputs_after"][0], before)
