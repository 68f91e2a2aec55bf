"""Grader tests for cad.context_aware_sampling (context-aware decoding, sampling).

What is checked is the decoding rule itself, not one way of drawing samples: how a token
is drawn (torch.multinomial, torch.distributions.Categorical, Gumbel noise, ...) and how
the model is run (whole sequences, or a key/value cache) are left to the implementation.

- at temperature 1e-5 sampling from the adjusted distribution always takes its most likely
  token, so the output is fixed: compared with outputs recorded from the reference (where
  every step's best token wins by a margin that rounding cannot undo);
- at ordinary temperatures the first sampled token must follow the reference's next-token
  distribution (recorded from what it hands to torch.multinomial): a chi-square test over
  300 seeded samples, failing only below p = 1e-6;
- the output's form, the stopping rule, and reproducibility under torch.manual_seed.

Models are tiny GPT-2s (tests/cad_toy_models.py); the fixtures come from
generators/cad_samples.py.

Where the code runs: cad.py is imported only in the candidate process (lmr_bridge). The
probes below build the tiny model there from its seed, call context_aware_sampling on
prompts made here, and send back what it returned (and its inputs as the call left them);
every expected value (recorded outputs, the chi-square test, the model's own greedy
continuation for alpha = 0, computed here with transformers' GPT-2 and cad_toy_models)
is decided in this process.
"""
import json
import math
from pathlib import Path

import pytest
import torch
from lmr_bridge import probe

from cad_toy_models import NO_EOS, VOCAB, Tok, make_prompt, next_logits, tiny_lm

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TINY_TEMPERATURE = 1e-5
SAMPLES = 300
MIN_P_VALUE = 1e-6


@probe
def sampled(model_seed, input_ids, context, seed, eos, kwargs):
    """In the candidate: context_aware_sampling on the tiny model `model_seed` after
    torch.manual_seed(seed); its output, and its two tensor inputs as the call left them."""
    import torch
    from cad import context_aware_sampling

    model = tiny_lm(model_seed)
    torch.manual_seed(seed)
    out = context_aware_sampling(model, Tok(eos), input_ids, context, **kwargs)
    return {"out": out, "input_ids": input_ids, "context": context}


@probe
def first_tokens(model_seed, input_ids, context, seed, samples, kwargs):
    """In the candidate: `samples` calls with max_length=1 after one torch.manual_seed(seed)."""
    import torch
    from cad import context_aware_sampling

    model = tiny_lm(model_seed)
    torch.manual_seed(seed)
    return [context_aware_sampling(model, Tok(), input_ids, context, max_length=1, **kwargs) for _ in range(samples)]


def run(model_seed, input_ids, context, seed=0, eos=NO_EOS, **kwargs):
    return sampled(model_seed, input_ids, context, seed, eos, kwargs)["out"]


def as_list(t):
    return [int(x) for x in t.reshape(-1)]


def _fixture():
    return json.loads((FIXTURES / "cad_samples.json").read_text(encoding="utf-8"))


def _greedy_id(c):
    eos = "" if c["eos"] == NO_EOS else f"-eos{c['eos']}"
    return f"m{c['model']}-p{c['prompt']}-a{c['alpha']}-n{c['max_length']}{eos}"


def _distribution_id(c):
    return f"m{c['model']}-p{c['prompt']}-a{c['alpha']}-t{c['temperature']}"


def chi_square_survival(x, dof):
    """P(X >= x) for X ~ chi-square(dof): the regularised upper incomplete gamma Q(dof/2, x/2)."""
    a, z = dof / 2.0, x / 2.0
    if z <= 0:
        return 1.0
    scale = math.exp(-z + a * math.log(z) - math.lgamma(a))
    if z < a + 1:  # power series for the lower part
        term = total = 1.0 / a
        n = 1
        while abs(term) > 1e-16 * abs(total):
            term *= z / (a + n)
            total += term
            n += 1
        return max(0.0, 1.0 - scale * total)
    tiny = 1e-300  # continued fraction for the upper part (modified Lentz)
    b = z + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return scale * h


def chi_square_p_value(counts, probs, min_expected=10.0):
    """Pearson's test of observed counts against probabilities; cells expected below
    `min_expected` times are pooled."""
    n = sum(counts)
    cells, pool_obs, pool_exp = [], 0, 0.0
    for obs, p in zip(counts, probs):
        if n * p >= min_expected:
            cells.append((obs, n * p))
        else:
            pool_obs, pool_exp = pool_obs + obs, pool_exp + n * p
    if pool_exp > 0:
        if pool_exp < min_expected and cells:
            cells.sort(key=lambda oe: oe[1])
            obs, exp = cells.pop(0)
            pool_obs, pool_exp = pool_obs + obs, pool_exp + exp
        cells.append((pool_obs, pool_exp))
    stat = sum((obs - exp) ** 2 / exp for obs, exp in cells)
    return chi_square_survival(stat, len(cells) - 1)


# ---------------------------------------------------------------------------------------------
# the adjusted distribution


@pytest.mark.parametrize("case", _fixture()["greedy"], ids=_greedy_id)
def test_tiny_temperature_matches_the_reference(case):
    input_ids, context = make_prompt(case["prompt"], case["context_len"], case["question_len"])
    out = run(case["model"], input_ids, context, eos=case["eos"], alpha=case["alpha"],
              max_length=case["max_length"], temperature=TINY_TEMPERATURE)
    assert out.shape == (1, len(case["output"]))
    assert as_list(out) == case["output"]


@pytest.mark.parametrize("index,case", list(enumerate(_fixture()["distributions"])),
                         ids=[_distribution_id(c) for c in _fixture()["distributions"]])
def test_sampled_tokens_follow_the_reference_distribution(index, case):
    input_ids, context = make_prompt(case["prompt"], case["context_len"], case["question_len"])
    counts = [0] * VOCAB
    outs = first_tokens(case["model"], input_ids, context, 4242 + index, SAMPLES,
                        {"alpha": case["alpha"], "temperature": case["temperature"]})
    assert len(outs) == SAMPLES
    for out in outs:
        assert out.shape == (1, input_ids.shape[1] + 1)
        counts[int(out[0, -1])] += 1
    p_value = chi_square_p_value(counts, case["probs"])
    assert p_value > MIN_P_VALUE, f"sampled tokens {counts} do not follow the distribution (p = {p_value:.3g})"


def test_alpha_zero_follows_the_model_alone():
    # with no contrast the most likely token is the model's own, on the whole sequence
    # (the model is built here too, from the same seed, with transformers' GPT-2: not workspace code)
    input_ids, context = make_prompt(30, 6, 5)
    model = tiny_lm(1)
    want = input_ids.clone()
    for _ in range(10):
        want = torch.cat([want, next_logits(model, want).argmax().view(1, 1)], dim=-1)
    out = run(1, input_ids, context, alpha=0.0, max_length=10, temperature=TINY_TEMPERATURE)
    assert as_list(out) == as_list(want)


def test_recorded_cases_cover_the_settings():
    fixture = _fixture()
    assert {c["alpha"] for c in fixture["greedy"]} >= {0.0, 0.5, 1.0, 2.0, 3.0}
    assert any(c["eos"] != NO_EOS for c in fixture["greedy"])
    assert len({(c["alpha"], c["temperature"]) for c in fixture["distributions"]}) >= 3


# ---------------------------------------------------------------------------------------------
# the output and the stopping rule


def test_output_is_the_prompt_followed_by_max_length_new_tokens():
    input_ids, context = make_prompt(31, 6, 4)
    before = input_ids.clone()
    out = run(0, input_ids, context, seed=11, alpha=0.5, max_length=7, temperature=1.0)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.long
    assert out.shape == (1, 10 + 7)
    assert torch.equal(out[:, :10], before)
    assert all(0 <= t < VOCAB for t in as_list(out[:, 10:]))


def test_input_ids_are_not_modified():
    input_ids, context = make_prompt(32, 5, 4)
    before, context_before = input_ids.clone(), context.clone()
    got = sampled(2, input_ids, context, 3, NO_EOS, {"alpha": 1.0, "max_length": 6, "temperature": 1.0})
    assert torch.equal(got["input_ids"], before) and torch.equal(got["context"], context_before)


def test_zero_new_tokens_returns_the_prompt():
    input_ids, context = make_prompt(33, 5, 3)
    out = run(1, input_ids, context, alpha=1.0, max_length=0)
    assert out.shape == input_ids.shape and torch.equal(out, input_ids)


def test_stops_right_after_the_end_of_sequence_token():
    # the recorded continuation without an end-of-sequence id, and its token at step 5 as that id
    case = next(c for c in _fixture()["greedy"] if c["eos"] == NO_EOS and c["alpha"] == 1.0)
    input_ids, context = make_prompt(case["prompt"], case["context_len"], case["question_len"])
    prompt_len = input_ids.shape[1]
    new = case["output"][prompt_len:]
    eos = new[5]
    want = case["output"][: prompt_len + new.index(eos) + 1]
    out = run(case["model"], input_ids, context, eos=eos, alpha=case["alpha"],
              max_length=case["max_length"], temperature=TINY_TEMPERATURE)
    assert as_list(out) == want


def test_end_of_sequence_token_in_the_prompt_does_not_stop():
    # the last prompt token is the end-of-sequence id, and the continuation never produces it
    case = next(c for c in _fixture()["greedy"] if c["eos"] == NO_EOS and c["alpha"] > 0
                and c["output"][c["context_len"] + c["question_len"] - 1] not in c["output"][c["context_len"] + c["question_len"]:])
    input_ids, context = make_prompt(case["prompt"], case["context_len"], case["question_len"])
    eos = case["output"][input_ids.shape[1] - 1]
    out = run(case["model"], input_ids, context, eos=eos, alpha=case["alpha"],
              max_length=case["max_length"], temperature=TINY_TEMPERATURE)
    assert as_list(out) == case["output"]


def test_same_seed_gives_the_same_sample():
    input_ids, context = make_prompt(34, 5, 5)
    a = run(0, input_ids, context, seed=77, alpha=0.5, max_length=15, temperature=1.0)
    b = run(0, input_ids, context, seed=77, alpha=0.5, max_length=15, temperature=1.0)
    assert torch.equal(a, b)
