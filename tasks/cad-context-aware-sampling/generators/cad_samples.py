"""Writes fixtures/cad_samples.json: what the reference context_aware_sampling does on tiny models.

Run by `lmr record` from the root of the reference tree (cad.py with the reference body),
after tests/conftest.py has pointed the notebook's from_pretrained calls at tiny
stand-ins; writes $LMR_FIXTURES_OUT/fixtures/cad_samples.json and nothing else.

Two kinds of record, both independent of how an implementation draws its samples:

- "greedy": outputs at temperature 1e-5, where sampling from the adjusted distribution
  always picks its most likely token. Every step's best adjusted logit is checked to beat
  the second by more than 1e-3 (computed here from the model), so rounding differences
  (another torch, a key/value cache) cannot change the outcome. Some cases stop at an
  end-of-sequence id taken from the continuation itself.
- "distributions": the reference's next-token distribution for one step (the
  probabilities it hands to torch.multinomial, captured here), for the tests' statistical
  check of sampled tokens; rounded to 4 decimals, so that float32 rounding on another
  machine does not change the file (the test needs far less precision).
"""
import json
import os
import random
import sys
from pathlib import Path

import numpy as np
import torch

random.seed(0)
np.random.seed(0)
torch.manual_seed(0)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from cad import context_aware_sampling  # noqa: E402
from cad_toy_models import MODEL_SEEDS, NO_EOS, Tok, contrastive_logits, make_prompt, tiny_lm  # noqa: E402

TINY_TEMPERATURE = 1e-5
MIN_GAP = 1e-3

# model, prompt seed, context length, question length, alpha, max_length
GREEDY = [
    (0, 0, 8, 4, 0.0, 12),
    (1, 1, 12, 3, 0.0, 10),
    (2, 2, 3, 6, 0.0, 14),
    (0, 3, 6, 4, 0.5, 12),
    (1, 4, 5, 5, 0.5, 16),
    (2, 5, 9, 2, 1.0, 12),
    (0, 6, 4, 7, 1.0, 10),
    (1, 7, 7, 3, 2.0, 12),
    (2, 8, 10, 4, 2.0, 8),
    (0, 9, 5, 3, 3.0, 12),
    (1, 10, 6, 4, 1.0, 14),
    (2, 11, 1, 5, 1.5, 10),
]
# greedy cases rerun with an end-of-sequence id: the token generated at this step
EOS_AT = {3: 4, 5: 2, 7: 6, 10: 0}
# model, prompt seed, context length, question length, alpha, temperature
DISTRIBUTIONS = [
    (0, 20, 6, 4, 1.0, 0.7),
    (1, 21, 8, 3, 2.0, 1.5),
    (2, 22, 5, 5, 0.0, 0.8),
]

models = {seed: tiny_lm(seed) for seed in MODEL_SEEDS}


def smallest_gap(model, output, prompt_len, context_len, alpha):
    """The smallest margin of the best adjusted logit over the second, along `output`."""
    gaps = []
    for t in range(prompt_len, output.shape[1]):
        logits = contrastive_logits(model, output[:, :t], context_len, alpha)
        top = torch.topk(logits, 2)
        assert int(top.indices[0]) == int(output[0, t]), "the reference did not follow the argmax"
        gaps.append(float(top.values[0] - top.values[1]))
    return min(gaps)


def greedy_case(index, m, p, c, q, alpha, max_length, eos=NO_EOS):
    input_ids, context = make_prompt(p, c, q)
    torch.manual_seed(index)
    out = context_aware_sampling(models[m], Tok(eos), input_ids, context, alpha=alpha, max_length=max_length, temperature=TINY_TEMPERATURE)
    gap = smallest_gap(models[m], out, input_ids.shape[1], c, alpha)
    assert gap > MIN_GAP, (index, gap)
    return {
        "model": m, "prompt": p, "context_len": c, "question_len": q, "alpha": alpha,
        "max_length": max_length, "eos": eos, "output": [int(t) for t in out[0]],
    }


greedy = []
for i, (m, p, c, q, alpha, n) in enumerate(GREEDY):
    case = greedy_case(i, m, p, c, q, alpha, n)
    assert len(case["output"]) == c + q + n
    greedy.append(case)
    if i in EOS_AT:
        eos = case["output"][c + q + EOS_AT[i]]
        stopped = greedy_case(i, m, p, c, q, alpha, n, eos=eos)
        assert len(stopped["output"]) < len(case["output"]), "the end-of-sequence id did not stop decoding"
        greedy.append(stopped)
# the contrast matters on these models: alpha > 0 changes some continuations of alpha = 0
plain = {(g["model"], g["prompt"]): g["output"] for g in greedy if g["alpha"] == 0}
for m, p, c, q, alpha, n in [(0, 0, 8, 4, 1.0, 12), (1, 1, 12, 3, 1.0, 10)]:
    input_ids, context = make_prompt(p, c, q)
    out = context_aware_sampling(models[m], Tok(), input_ids, context, alpha=alpha, max_length=n, temperature=TINY_TEMPERATURE)
    assert [int(t) for t in out[0]] != plain[(m, p)]

captured = []
multinomial = torch.multinomial


def capturing_multinomial(probs, *args, **kwargs):
    captured.append(probs.detach().clone())
    return multinomial(probs, *args, **kwargs)


torch.multinomial = capturing_multinomial
distributions = []
for m, p, c, q, alpha, temperature in DISTRIBUTIONS:
    input_ids, context = make_prompt(p, c, q)
    captured.clear()
    context_aware_sampling(models[m], Tok(), input_ids, context, alpha=alpha, max_length=1, temperature=temperature)
    assert len(captured) == 1
    probs = captured[0].reshape(-1).double()
    distributions.append({
        "model": m, "prompt": p, "context_len": c, "question_len": q, "alpha": alpha,
        "temperature": temperature, "probs": [round(float(x), 4) for x in probs],
    })
torch.multinomial = multinomial

document = {
    "note": "What the reference context_aware_sampling does on the tiny models of tests/cad_toy_models.py, recorded by generators/cad_samples.py: outputs at temperature 1e-5 (greedy) and one-step next-token distributions.",
    "greedy": greedy,
    "distributions": distributions,
}
out = Path(os.environ["LMR_FIXTURES_OUT"]) / "fixtures" / "cad_samples.json"
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
