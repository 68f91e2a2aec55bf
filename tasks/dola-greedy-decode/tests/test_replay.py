"""Replay tests: DoLa greedy decoding against the reference's runs in fixtures/dola_runs.json.

generators/dola_runs.py ran the reference `model.generate(..., dola_decoding=True, ...)` on
the tiny seeded LLaMA of tiny_llama.py (static and dynamic premature layers, several
candidate sets, alphas and repetition penalties, a mature layer below the last one, a run
that stops at EOS) and wrote the prompt, the options and the reference's sequences,
per-step scores and premature_layer_dist. Each test reruns one case the same way with the
code in the workspace and compares one of those three outputs.

The vendored transformers (and so the model) lives only in the candidate process: the
probe below reruns the case there and sends back the three outputs as plain data; the
recorded answers never leave this process.
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from lmr_bridge import probe

RTOL = 1e-4
ATOL = 1e-4

RUNS = json.loads((Path(__file__).resolve().parent / "../fixtures/dola_runs.json").read_text(encoding="utf-8"))["runs"]
IDS = [r["name"] for r in RUNS]


@probe
def rerun(model_seed, prompt, max_new_tokens, kwargs):
    """In the candidate: one recorded case rerun as the generator ran it (the inputs only)."""
    import torch
    import tiny_llama

    model = tiny_llama.make_model(model_seed)
    ids = torch.tensor([prompt])
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=max_new_tokens, dola_decoding=True,
                             output_scores=True, return_dict_in_generate=True, **kwargs)
    scores = None if out.scores is None else list(out.scores)
    return {"sequences": out.sequences, "scores": scores, "premature_layer_dist": out.premature_layer_dist}


def run_case(case):
    return rerun(case["model_seed"], case["prompt"], case["max_new_tokens"], case["kwargs"])


@pytest.mark.parametrize("case", RUNS, ids=IDS)
def test_sequences_match_reference(case):
    out = run_case(case)
    assert out["sequences"][0].tolist() == case["sequences"]


@pytest.mark.parametrize("case", RUNS, ids=IDS)
def test_scores_match_reference(case):
    out = run_case(case)
    assert out["scores"] is not None and len(out["scores"]) == len(case["scores"])
    for step, (got, want) in enumerate(zip(out["scores"], case["scores"])):
        got = got[0].double().tolist()
        assert len(got) == len(want)
        filtered_got = [i for i, v in enumerate(got) if math.isinf(v) and v < 0]
        filtered_want = [i for i, v in enumerate(want) if v is None]
        assert filtered_got == filtered_want, f"step {step}: tokens outside the plausible set differ"
        kept = [i for i, v in enumerate(want) if v is not None]
        assert np.allclose([got[i] for i in kept], [want[i] for i in kept], rtol=RTOL, atol=ATOL), f"step {step}: scores differ"


@pytest.mark.parametrize("case", RUNS, ids=IDS)
def test_premature_layer_dist_matches_reference(case):
    out = run_case(case)
    want = {int(k): v for k, v in case["premature_layer_dist"].items()}
    assert dict(out["premature_layer_dist"]) == want
