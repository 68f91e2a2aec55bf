"""Grader tests for cad.context_aware_sampling (context-aware decoding, sampling variant).

Models are tiny GPT-2s built from a config, with weights drawn from numpy's seeded
RandomState (no download). Checks: recorded reference samples, the limit of a tiny
temperature (argmax of the contrastive logits, computed here), alpha = 0 against plain
sampling from the model, which inputs the model sees, max_length, EOS, determinism.
"""
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import transformers

from cad import context_aware_sampling

_equal = torch.equal
_softmax = torch.softmax
_multinomial = torch.multinomial
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VOCAB = 40
NO_EOS = 10_000  # an id no token has: generation never stops early


# ---------------------------------------------------------------------------------------------
# models and inputs


def tiny_lm(seed, vocab=VOCAB, scale=0.3):
    """A 2-layer GPT-2 whose weights come from numpy's RandomState(seed) (same on any torch)."""
    config = transformers.GPT2Config(
        vocab_size=vocab, n_positions=96, n_embd=32, n_layer=2, n_head=2,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    )
    model = transformers.GPT2LMHeadModel(config)
    rs = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            noise = torch.from_numpy(rs.standard_normal(tuple(p.shape)).astype(np.float32))
            p.copy_(1.0 + 0.1 * noise if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")) else scale * noise)
    return model.eval()


class Tok:
    """The tokenizer argument: only its end-of-sequence id matters to decoding."""

    def __init__(self, eos_token_id=NO_EOS):
        self.eos_token_id = eos_token_id
        self.pad_token_id = None

    def decode(self, ids, skip_special_tokens=False):
        return " ".join(str(int(i)) for i in ids)


class Recorder(torch.nn.Module):
    """Wraps a model and keeps a copy of every input it is called with."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.inputs = []

    def forward(self, input_ids, *args, **kwargs):
        self.inputs.append(input_ids.detach().clone())
        return self.model(input_ids, *args, **kwargs)


def make_prompt(seed, context_len, question_len, vocab=VOCAB):
    """input_ids = [context ; question] of shape (1, C + Q), and the 1-D context ids."""
    g = np.random.RandomState(1000 + seed)
    context = torch.from_numpy(g.randint(2, vocab, size=context_len)).long()
    question = torch.from_numpy(g.randint(2, vocab, size=question_len)).long()
    return torch.cat([context, question]).unsqueeze(0), context


@pytest.fixture(scope="module")
def models():
    return {seed: tiny_lm(seed) for seed in (0, 1, 2)}


def last_logits(model, ids):
    with torch.no_grad():
        return model(ids).logits[0, -1, :].double()


def greedy_oracle(model, input_ids, context_len, alpha, steps):
    """Argmax of (1 + alpha) * logits(full) - alpha * logits(without the context), step by step.
    Also returns the smallest gap between the best and second-best adjusted logit."""
    ids = input_ids.clone()
    gaps = []
    for _ in range(steps):
        adjusted = (1 + alpha) * last_logits(model, ids) - alpha * last_logits(model, ids[:, context_len:])
        top = torch.topk(adjusted, 2).values
        gaps.append(float(top[0] - top[1]))
        ids = torch.cat([ids, adjusted.argmax().view(1, 1)], dim=-1)
    return ids, min(gaps)


def plain_sampler(model, input_ids, steps, temperature, seed):
    """Regular ancestral sampling from the model on the full input (no context contrast)."""
    torch.manual_seed(seed)
    ids = input_ids.clone()
    for _ in range(steps):
        with torch.no_grad():
            logits = model(ids).logits[:, -1, :]
        token = _multinomial(_softmax(logits / temperature, dim=-1), num_samples=1)
        ids = torch.cat([ids, token], dim=-1)
    return ids


def run(model, input_ids, context, seed=None, eos=NO_EOS, **kwargs):
    if seed is not None:
        torch.manual_seed(seed)
    return context_aware_sampling(model, Tok(eos), input_ids, context, **kwargs)


def as_list(t):
    return [int(x) for x in t.reshape(-1)]


# ---------------------------------------------------------------------------------------------
# recorded reference samples


def _load_cases():
    return json.loads((FIXTURES / "cad_samples.json").read_text(encoding="utf-8"))["cases"]


def _case_id(c):
    return f"m{c['model']}-p{c['prompt']}-a{c['alpha']}-t{c['temperature']}-n{c['max_length']}-s{c['seed']}"


@pytest.mark.parametrize("case", _load_cases(), ids=_case_id)
def test_matches_recorded_reference_samples(models, case):
    input_ids, context = make_prompt(case["prompt"], case["context_len"], case["question_len"])
    out = run(models[case["model"]], input_ids, context, seed=case["seed"], eos=case["eos"],
              alpha=case["alpha"], max_length=case["max_length"], temperature=case["temperature"])
    assert out.shape == (1, len(case["output"]))
    assert as_list(out) == case["output"]


def test_recorded_cases_cover_the_settings():
    cases = _load_cases()
    assert {c["alpha"] for c in cases} >= {0.0, 0.5, 1.0, 2.0}
    assert {c["temperature"] for c in cases} >= {0.5, 1.0, 1.5}
    assert any(c["eos"] != NO_EOS and len(c["output"]) < c["prompt_len"] + c["max_length"] for c in cases)


# ---------------------------------------------------------------------------------------------
# properties


def test_output_is_the_prompt_followed_by_max_length_new_tokens(models):
    input_ids, context = make_prompt(3, 6, 4)
    before = input_ids.clone()
    out = run(models[0], input_ids, context, seed=11, alpha=0.5, max_length=7, temperature=1.0)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.long
    assert out.shape == (1, 10 + 7)
    assert _equal(out[:, :10], before)
    assert _equal(input_ids, before), "input_ids must not be modified"
    assert all(0 <= t < VOCAB for t in as_list(out[:, 10:]))


def test_zero_new_tokens_returns_the_prompt(models):
    input_ids, context = make_prompt(4, 5, 3)
    out = run(models[1], input_ids, context, seed=0, alpha=1.0, max_length=0)
    assert out.shape == input_ids.shape and _equal(out, input_ids)


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("model_seed,prompt", [(0, (5, 8, 4)), (1, (6, 12, 3)), (2, (7, 3, 6))])
def test_tiny_temperature_follows_the_argmax_of_the_contrastive_logits(models, alpha, model_seed, prompt):
    seed, context_len, question_len = prompt
    input_ids, context = make_prompt(seed, context_len, question_len)
    want, gap = greedy_oracle(models[model_seed], input_ids, context_len, alpha, steps=10)
    assert gap > 1e-3  # the argmax is well defined (a property of our fixture models)
    out = run(models[model_seed], input_ids, context, seed=5, alpha=alpha, max_length=10, temperature=1e-5)
    assert as_list(out) == as_list(want)


def test_the_context_changes_the_greedy_continuation(models):
    # on these prompts the contrast with the context-free logits picks other tokens than the
    # model alone would: alpha matters
    differs = 0
    for seed in range(3):
        input_ids, context = make_prompt(seed, 8, 4)
        plain = run(models[seed], input_ids, context, seed=1, alpha=0.0, max_length=8, temperature=1e-5)
        contrast = run(models[seed], input_ids, context, seed=1, alpha=1.0, max_length=8, temperature=1e-5)
        differs += as_list(plain) != as_list(contrast)
    assert differs >= 2


@pytest.mark.parametrize("temperature", [0.7, 1.0, 2.0])
def test_alpha_zero_is_regular_sampling(models, temperature):
    input_ids, context = make_prompt(8, 7, 5)
    want = plain_sampler(models[2], input_ids, steps=12, temperature=temperature, seed=123)
    out = run(models[2], input_ids, context, seed=123, alpha=0.0, max_length=12, temperature=temperature)
    assert as_list(out) == as_list(want)


def test_model_sees_the_full_sequence_and_the_sequence_without_the_context(models):
    input_ids, context = make_prompt(9, 6, 3)
    spy = Recorder(models[0])
    out = run(spy, input_ids, context, seed=4, alpha=0.5, max_length=5, temperature=1.0)
    seen = {tuple(as_list(x)) for x in spy.inputs}
    for step in range(5):
        full = out[:, : 9 + step]
        assert tuple(as_list(full)) in seen, f"step {step}: full sequence not passed to the model"
        assert tuple(as_list(full[:, 6:])) in seen, f"step {step}: sequence without the context not passed"
    assert all(x.dim() == 2 and x.shape[0] == 1 for x in spy.inputs)


def test_stops_after_the_end_of_sequence_token(models):
    input_ids, context = make_prompt(10, 6, 4)
    greedy, _ = greedy_oracle(models[1], input_ids, 6, 0.5, steps=12)
    new = as_list(greedy[:, 10:])
    eos = new[4]
    first = new.index(eos)
    out = run(models[1], input_ids, context, seed=0, eos=eos, alpha=0.5, max_length=12, temperature=1e-5)
    assert as_list(out) == as_list(input_ids) + new[: first + 1]
    # the prompt may contain the EOS id: only generated tokens stop decoding
    prompt_with_eos = input_ids.clone()
    prompt_with_eos[0, -1] = eos
    out = run(models[1], prompt_with_eos, context, seed=0, eos=eos, alpha=0.5, max_length=6, temperature=1.0)
    generated = as_list(out[:, prompt_with_eos.shape[1]:])
    assert len(generated) == 6 and eos not in generated


def test_same_seed_same_sample_and_seeds_differ(models):
    input_ids, context = make_prompt(12, 5, 5)
    a = run(models[0], input_ids, context, seed=77, alpha=0.5, max_length=15, temperature=1.0)
    b = run(models[0], input_ids, context, seed=77, alpha=0.5, max_length=15, temperature=1.0)
    assert _equal(a, b)
    others = {tuple(as_list(run(models[0], input_ids, context, seed=s, alpha=0.5, max_length=15, temperature=1.0)))
              for s in range(5)}
    assert len(others) >= 3


def test_higher_temperature_flattens_the_sampled_tokens(models):
    # the same prompt sampled many times: the share of the contrastive argmax token at the first
    # step falls as the temperature rises
    input_ids, context = make_prompt(13, 6, 4)
    greedy, _ = greedy_oracle(models[2], input_ids, 6, 1.0, steps=1)
    top = int(greedy[0, -1])
    share = {}
    for temperature in (0.25, 1.0, 8.0):
        hits = 0
        for s in range(150):
            out = run(models[2], input_ids, context, seed=1000 + s, alpha=1.0, max_length=1, temperature=temperature)
            hits += int(out[0, -1]) == top
        share[temperature] = hits
    assert share[0.25] > share[1.0] > share[8.0]
