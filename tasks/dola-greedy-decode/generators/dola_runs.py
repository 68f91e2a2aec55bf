"""Generator of fixtures/dola_runs.json: DoLa greedy decoding runs of the reference.

`lmr record` cannot record the target from a driver: it is a method of the vendored
`transformers-4.28.1/src/transformers` package, whose path is no importable module name,
and each call's `self` is a whole model. So this script runs the reference itself, the way
DoLa's own scripts do (`model.generate(..., dola_decoding=True, ...)`, batch of one), on the
tiny seeded LLaMA of tests/tiny_llama.py, and writes what tests/test_replay.py needs to rerun
each case: the model seed, the prompt, the generate() options, and the reference's
sequences, per-step scores and premature_layer_dist.

Runs from the root of the reference tree after tests/conftest.py (vendored transformers and
tests/ on sys.path); writes only $LMR_FIXTURES_OUT/fixtures/dola_runs.json. Seeded here;
scores rounded to 6 significant digits (None for -inf) so last-bit CPU differences do not
show.
"""
import json
import math
import os
import random

import numpy as np
import torch

random.seed(0)
np.random.seed(0)
torch.manual_seed(0)

import tiny_llama  # noqa: E402  (tests/, put on sys.path by tests/conftest.py)

CASES = [
    # dynamic premature layer over all lower layers, the paper's alpha and repetition penalty
    dict(name="dynamic_all_layers_penalty", model_seed=0, prompt_seed=1, prompt_len=6, max_new_tokens=8,
         kw=dict(mature_layer=4, candidate_premature_layers=[0, 1, 2, 3], relative_top=0.1, repetition_penalty=1.2)),
    dict(name="dynamic_even_layers", model_seed=0, prompt_seed=2, prompt_len=5, max_new_tokens=8,
         kw=dict(mature_layer=4, candidate_premature_layers=[0, 2], relative_top=0.1)),
    dict(name="dynamic_upper_bucket_alpha_0.3", model_seed=1, prompt_seed=3, prompt_len=7, max_new_tokens=8,
         kw=dict(mature_layer=4, candidate_premature_layers=[1, 2, 3], relative_top=0.3)),
    dict(name="dynamic_alpha_0.02_penalty", model_seed=2, prompt_seed=4, prompt_len=4, max_new_tokens=8,
         kw=dict(mature_layer=4, candidate_premature_layers=[3, 1, 0], relative_top=0.02, repetition_penalty=1.2)),
    dict(name="dynamic_mature_not_last", model_seed=1, prompt_seed=5, prompt_len=6, max_new_tokens=6,
         kw=dict(mature_layer=3, candidate_premature_layers=[0, 1, 2], relative_top=0.1)),
    dict(name="static_layer_2", model_seed=0, prompt_seed=6, prompt_len=6, max_new_tokens=8,
         kw=dict(mature_layer=4, base_layer=2, relative_top=0.1)),
    dict(name="static_layer_0_penalty", model_seed=2, prompt_seed=7, prompt_len=5, max_new_tokens=8,
         kw=dict(mature_layer=4, base_layer=0, relative_top=0.1, repetition_penalty=1.2)),
    dict(name="static_layer_1_alpha_0.5", model_seed=3, prompt_seed=8, prompt_len=3, max_new_tokens=6,
         kw=dict(mature_layer=4, base_layer=1, relative_top=0.5)),
    dict(name="dynamic_seed_3_penalty_1.5", model_seed=3, prompt_seed=9, prompt_len=8, max_new_tokens=10,
         kw=dict(mature_layer=4, candidate_premature_layers=[0, 1, 2, 3], relative_top=0.1, repetition_penalty=1.5)),
    dict(name="dynamic_single_token_prompt", model_seed=4, prompt_seed=10, prompt_len=0, max_new_tokens=8,
         kw=dict(mature_layer=4, candidate_premature_layers=[0, 1, 2, 3], relative_top=0.1)),
]


def r6(x):
    x = float(x)
    if x == -math.inf:
        return None
    return float("%.6g" % x)


def run(case):
    model = tiny_llama.make_model(case["model_seed"])
    ids = tiny_llama.prompt(case["prompt_seed"], case["prompt_len"])
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=case["max_new_tokens"], dola_decoding=True,
                             output_scores=True, return_dict_in_generate=True, **case["kw"])
    return {
        "name": case["name"],
        "model_seed": case["model_seed"],
        "prompt": ids[0].tolist(),
        "max_new_tokens": case["max_new_tokens"],
        "kwargs": case["kw"],
        "sequences": out.sequences[0].tolist(),
        "scores": [[r6(v) for v in s[0].tolist()] for s in out.scores],
        "premature_layer_dist": {str(k): v for k, v in sorted(out.premature_layer_dist.items())},
    }


runs = [run(c) for c in CASES]
dest = os.path.join(os.environ["LMR_FIXTURES_OUT"], "fixtures", "dola_runs.json")
os.makedirs(os.path.dirname(dest), exist_ok=True)
with open(dest, "w") as f:
    f.write(json.dumps({"runs": runs}, indent=1, sort_keys=True) + "\n")
