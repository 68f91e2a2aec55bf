"""Tests for LLM.get_hidden_states (utils.py): one prompt through the model, every traced layer's output.

The model is a tiny, randomly initialised LLaMA/Mistral built from seeded weights
(tests/tiny_llm.py); the expected states come from tests/oracle_states.py, which reads each
decoder layer's MLP input (the post-attention norm's output) with hooks of its own. The
code under test runs in the candidate (lmr_bridge); every check is decided here.
"""
import numpy as np
import pytest
from lmr_bridge import probe

import oracle_states as oracle

PROMPTS = [
    "a gripping and moving film . according to the sentence , judge the emotion is positive or negative .",
    "the plot never comes together",
    "judge the statement is true or false . the city of oslo is in norway .",
    "scientists discover water is wet",
]


@probe
def traced(spec, weights, prompts, layer_num, quant, cuda_id=0, repeat=1):
    """In the candidate: LLM(cuda_id, layer_num, quant).get_hidden_states on each prompt, under no_grad
    as main.py calls it, with CUDA moves recorded instead of made."""
    import torch
    from tiny_llm import CudaMoves, make_tokenizer, model_from_weights
    from utils import LLM

    model = model_from_weights(spec, weights)
    tok = make_tokenizer()
    llm = LLM(cuda_id=cuda_id, layer_num=layer_num, quant=quant)
    states, kinds = [], []
    with CudaMoves() as moves:
        for _ in range(repeat):
            for prompt in prompts:
                with torch.no_grad():
                    hs = llm.get_hidden_states(model, tok, prompt)
                kinds.append(type(hs).__name__)
                states.append(hs.detach().cpu().numpy())
    hooks = sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())
    return {"states": states, "kinds": kinds, "moves": moves.moves, "hooks_left": hooks}


def run(spec, seed, prompts, layer_num=None, quant=16, cuda_id=0, repeat=1):
    layer_num = oracle.model(spec, seed).config.num_hidden_layers if layer_num is None else layer_num
    out = traced(spec, oracle.weights(spec, seed), list(prompts), layer_num, quant, cuda_id, repeat)
    assert out["kinds"] == ["Tensor"] * (len(prompts) * repeat), f"get_hidden_states must return a torch.Tensor, got {out['kinds']}"
    return out


def assert_states(got, want, rtol=1e-5, atol=1e-5, what=""):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape} (layers, tokens, hidden)"
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        layer, token, unit = np.unravel_index(np.argmax(np.abs(got - want)), got.shape)
        raise AssertionError(
            f"{what}: layer {layer}, token {token}, unit {unit}: {got[layer, token, unit]!r} != {want[layer, token, unit]!r}"
        )


@pytest.mark.parametrize("spec,seed", [("llama-3x16", 0), ("mistral-2x16", 1), ("llama-4x24", 2)])
def test_states_are_each_layers_post_attention_norm_output(spec, seed):
    out = run(spec, seed, PROMPTS)
    for prompt, got in zip(PROMPTS, out["states"]):
        assert_states(got, oracle.layer_states(spec, seed, prompt), what=prompt[:30])


def test_shape_is_layers_by_prompt_tokens_by_hidden_size():
    out = run("llama-4x24", 3, PROMPTS[:2])
    for prompt, got in zip(PROMPTS[:2], out["states"]):
        # every token of the prompt as the tokenizer encodes it by default (<s> included)
        assert got.shape == (4, oracle.token_count(prompt), 24)


def test_layer_num_below_the_models_depth_gives_the_first_layers():
    # main.py takes the layer count from its own table, not from the model
    out = run("llama-4x24", 4, PROMPTS[:2], layer_num=2)
    for prompt, got in zip(PROMPTS[:2], out["states"]):
        assert_states(got, oracle.layer_states("llama-4x24", 4, prompt, layers=2), what=prompt[:30])


def test_rows_are_rms_normalised_up_to_the_norm_gain():
    spec, seed = "llama-3x16", 5
    gains = oracle.norm_gains(spec, seed, 3)
    out = run(spec, seed, PROMPTS)
    for got in out["states"]:
        unscaled = got / gains[:, None, :]
        mean_square = (unscaled.astype(np.float64) ** 2).mean(axis=-1)
        assert np.all(np.abs(mean_square - 1.0) < 1e-3), mean_square


def test_quant_32_puts_model_and_inputs_on_cuda_of_cuda_id():
    spec, seed = "llama-3x16", 7
    out = run(spec, seed, PROMPTS[:2], quant=32, cuda_id=3)
    moves = out["moves"]
    module_moves = [m for m in moves if m[0] == "module"]
    tensor_moves = [m for m in moves if m[0] == "tensor"]
    assert module_moves, "the model was not moved to a CUDA device"
    assert tensor_moves, "the inputs were not moved to a CUDA device"
    assert {m[1] for m in moves} == {"cuda:3"}, moves
    for prompt in PROMPTS[:2]:
        # the token ids: int64, one per token (with or without the batch dimension yet)
        tokens = oracle.token_count(prompt)
        moved = [m for m in tensor_moves if m[2] == "int64" and int(np.prod(m[3])) == tokens]
        assert moved, f"the token ids of {prompt[:20]!r} were not moved: {moves}"


def test_quant_32_states_are_the_same_layers():
    spec, seed = "mistral-2x16", 8
    out = run(spec, seed, PROMPTS[1:3], quant=32, cuda_id=1)
    for prompt, got in zip(PROMPTS[1:3], out["states"]):
        assert_states(got, oracle.layer_states(spec, seed, prompt), what=prompt[:30])


@pytest.mark.parametrize("quant", [8, 16])
def test_quantised_models_stay_where_they_are(quant):
    out = run("llama-3x16", 9, PROMPTS[:2], quant=quant)
    assert out["moves"] == [], f"quant {quant}: nothing is moved to a CUDA device, got {out['moves']}"


def test_no_hooks_are_left_and_calls_repeat():
    spec, seed = "llama-3x16", 10
    out = run(spec, seed, PROMPTS[:2], repeat=2)
    assert out["hooks_left"] == 0, "hooks left on the model after get_hidden_states returned"
    first, second = out["states"][:2], out["states"][2:]
    for a, b in zip(first, second):
        assert np.array_equal(a, b)
