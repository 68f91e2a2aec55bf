"""Replays of the reference's outputs (fixtures/reference_states.json, from generators/reference_states.py).

Each case is rebuilt from what the fixture stores as inputs (model spec and seed,
dataset name, prompt, questions) and sent to the candidate; its arrays are compared with the
recorded ones to 1e-5 (float32; room for another machine's kernels to round differently).
"""
import json
from pathlib import Path

import numpy as np
import pytest
from lmr_bridge import probe

import oracle_states as oracle

FIXTURE = json.loads((Path(__file__).resolve().parent.parent / "fixtures" / "reference_states.json").read_text())


@probe
def replay_collect(spec, weights, data_name, prompt, cot, first, second, tot_layer):
    from dataset import DataProcessing
    from main import collect_hidden_states
    from tiny_llm import CudaMoves, make_tokenizer, model_from_weights
    from utils import LLM

    model = model_from_weights(spec, weights)
    DP = DataProcessing(data_path="unused", data_name=data_name, noise="non-noise")
    with CudaMoves():
        return collect_hidden_states(first, second, DP, prompt, cot, make_tokenizer(), model,
                                     LLM(cuda_id=0, layer_num=tot_layer, quant=16), tot_layer)


@probe
def replay_traced(spec, weights, layer_num, prompts):
    import torch
    from tiny_llm import CudaMoves, make_tokenizer, model_from_weights
    from utils import LLM

    model = model_from_weights(spec, weights)
    llm = LLM(cuda_id=0, layer_num=layer_num, quant=16)
    out = []
    with CudaMoves(), torch.no_grad():
        for prompt in prompts:
            out.append(llm.get_hidden_states(model, make_tokenizer(), prompt).detach().cpu().numpy())
    return out


RTOL, ATOL = 1e-5, 1e-5


@pytest.mark.parametrize("case", FIXTURE["collect"], ids=[c["name"] for c in FIXTURE["collect"]])
def test_collect_hidden_states_replays(case):
    got = replay_collect(case["spec"], oracle.weights(case["spec"], case["seed"]), case["dataset"],
                         case["prompt"], case["cot"], case["first"], case["second"], case["tot_layer"])
    assert isinstance(got, tuple) and len(got) == 2
    for group, key in zip(got, ("first_states", "second_states")):
        want = [np.asarray(a, dtype=np.float32) for a in case[key]]
        assert len(group) == len(want)
        for layer, (g, w) in enumerate(zip(group, want)):
            g = np.asarray(g)
            assert g.shape == w.shape, f"{key} layer {layer}: shape {g.shape} != {w.shape}"
            assert np.allclose(g, w, rtol=RTOL, atol=ATOL), f"{key} layer {layer}"


@pytest.mark.parametrize("case", FIXTURE["traced"], ids=[c["name"] for c in FIXTURE["traced"]])
def test_get_hidden_states_replays(case):
    got = replay_traced(case["spec"], oracle.weights(case["spec"], case["seed"]), case["layer_num"],
                        case["prompts"])
    for prompt, g, w in zip(case["prompts"], got, case["states"]):
        w = np.asarray(w, dtype=np.float32)
        assert g.shape == w.shape, f"{prompt[:20]!r}: shape {g.shape} != {w.shape}"
        assert np.allclose(g, w, rtol=RTOL, atol=ATOL), prompt[:20]
