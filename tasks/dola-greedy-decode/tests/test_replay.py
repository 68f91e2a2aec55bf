"""Replay tests: DoLa greedy decoding against the reference's runs in fixtures/dola_runs.json.

generators/dola_runs.py ran the reference `model.generate(..., dola_decoding=True, ...)` on
the tiny seeded LLaMA of tiny_llama.py (static and dynamic premature layers, several
candidate sets, alphas and repetition penalties, a mature layer below the last one, a run
that stops at EOS) and wrote the prompt, the options and the reference's sequences,
per-step scores and premature_layer_dist. Each test reruns one case the same way with the
code in the workspace and compares one of those three outputs.
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

_allclose = np.allclose  # bound before the code under test is imported
_isinf = math.isinf

import tiny_llama  # noqa: E402

RTOL = 1e-4
ATOL = 1e-4

RUNS = json.loads((Path(__file__).resolve().parent / "../fixtures/dola_runs.json").read_text(encoding="utf-8"))["runs"]
IDS = [r["name"] for r in RUNS]


def rerun(case):
    model = tiny_llama.make_model(case["model_seed"])
    ids = torch.tensor([case["prompt"]])
    with torch.no_grad():
        return model.generate(ids, max_new_tokens=case["max_new_tokens"], dola_decoding=True,
                              output_scores=True, return_dict_in_generate=True, **case["kwargs"])


@pytest.mark.parametrize("case", RUNS, ids=IDS)
def test_sequences_match_reference(case):
    out = rerun(case)
    assert out.sequences[0].tolist() == case["sequences"]


@pytest.mark.parametrize("case", RUNS, ids=IDS)
def test_scores_match_reference(case):
    out = rerun(case)
    assert out.scores is not None and len(out.scores) == len(case["scores"])
    for step, (got, want) in enumerate(zip(out.scores, case["scores"])):
        got = got[0].double().tolist()
        assert len(got) == len(want)
        filtered_got = [i for i, v in enumerate(got) if _isinf(v) and v < 0]
        filtered_want = [i for i, v in enumerate(want) if v is None]
        assert filtered_got == filtered_want, f"step {step}: tokens outside the plausible set differ"
        kept = [i for i, v in enumerate(want) if v is not None]
        assert _allclose([got[i] for i in kept], [want[i] for i in kept], rtol=RTOL, atol=ATOL), f"step {step}: scores differ"


@pytest.mark.parametrize("case", RUNS, ids=IDS)
def test_premature_layer_dist_matches_reference(case):
    out = rerun(case)
    want = {int(k): v for k, v in case["premature_layer_dist"].items()}
    assert dict(out.premature_layer_dist) == want
