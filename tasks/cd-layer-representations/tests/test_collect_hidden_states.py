"""Tests for collect_hidden_states (main.py): per layer, one row per question, for both groups.

Two kinds of runs: the whole path on a tiny seeded LLaMA/Mistral with utils.LLM and
dataset.DataProcessing (expected rows from tests/oracle_states.py: the prompt as
DataProcessing builds it, each layer's post-attention norm output at the last token), and
runs with a stand-in for utils.LLM whose states encode (layer, token position, which prompt),
which pins what goes where without depending on get_hidden_states.
"""
import numpy as np
import pytest
from lmr_bridge import probe, probe_helper

import oracle_states as oracle

MAIN_PROMPT = "According to the sentence, judge the emotion is Positive or Negative."
REVIEWS_POS = ["a gripping and moving film .", "the best movie of the year", "warm , funny and smart"]
REVIEWS_NEG = ["a dull and lifeless mess .", "the plot never comes together"]
CITIES_TRUE = ["The city of Paris is in France.", "The city of Tokyo is in Japan."]
CITIES_FALSE = ["The city of Lima is in Spain.", "The city of Oslo is in Chile.", "The city of Cairo is in Norway."]
SARCASTIC = ["man tells his cat he loves mondays", "scientists discover water is wet"]
PLAIN = ["local weather forecast predicts rain", "area man completely shocked by news"]

# (name, spec, seed, dataset, prompt, cot, first group, second group)
CASES = [
    ("stsa-llama", "llama-3x16", 20, "STSA", MAIN_PROMPT, None, REVIEWS_POS, REVIEWS_NEG),
    ("cities-mistral", "mistral-2x16", 21, "cities", "Judge the statement is True or False.", None, CITIES_TRUE, CITIES_FALSE),
    ("sarcasm-llama", "llama-4x24", 22, "sarcasm", "Task: is this sentence sarcastic? ",
     "Think carefully. Is there any sarcasm in this sentence? Please answer Yes or No.", SARCASTIC, PLAIN),
]


@probe
def collected(spec, weights, data_name, prompt, cot, first, second, tot_layer):
    """In the candidate: collect_hidden_states as main.py calls it (utils.LLM with --quant 16 and
    the script's own DataProcessing), on the tiny model."""
    from dataset import DataProcessing
    from main import collect_hidden_states
    from tiny_llm import CudaMoves, make_tokenizer, model_from_weights
    from utils import LLM

    model = model_from_weights(spec, weights)
    DP = DataProcessing(data_path="unused", data_name=data_name, noise="non-noise")
    Model = LLM(cuda_id=0, layer_num=tot_layer, quant=16)
    with CudaMoves():
        return collect_hidden_states(first, second, DP, prompt, cot, make_tokenizer(), model, Model, tot_layer)


@probe_helper
def text_code(text):
    """A small integer fingerprint of a prompt (exact in bfloat16)."""
    return sum((i + 1) * ord(c) for i, c in enumerate(text)) % 251


@probe_helper
class CodedStates:
    """Stands in for utils.LLM: for a prompt of n words, states of shape (layers, n + 1, 3) whose
    row at position p of layer i is (i, p, text_code(prompt))."""

    def __init__(self, layers, dtype):
        self.layers = layers
        self.dtype = dtype
        self.calls = []

    def get_hidden_states(self, model, tok, prefix, device="cuda:1"):
        import torch

        self.calls.append([type(model).__name__, type(tok).__name__, prefix])
        tokens = len(prefix.split()) + 1
        states = torch.zeros(self.layers, tokens, 3)
        states[:, :, 0] = torch.arange(self.layers, dtype=torch.float32)[:, None]
        states[:, :, 1] = torch.arange(tokens, dtype=torch.float32)[None, :]
        states[:, :, 2] = float(text_code(prefix))
        return states.to(getattr(torch, self.dtype))


@probe
def collected_coded(data_name, prompt, cot, first, second, tot_layer, model_layers, dtype):
    """In the candidate: collect_hidden_states with CodedStates in place of utils.LLM."""
    from dataset import DataProcessing
    from main import collect_hidden_states
    from tiny_llm import make_tokenizer, model_from_weights, seeded_weights

    model = model_from_weights("llama-3x16", seeded_weights("llama-3x16", 0))
    fake = CodedStates(model_layers, dtype)
    DP = DataProcessing(data_path="unused", data_name=data_name, noise="non-noise")
    result = collect_hidden_states(first, second, DP, prompt, cot, make_tokenizer(), model, fake, tot_layer)
    return {"result": result, "calls": fake.calls}


def check_layout(result, tot_layer, n_first, n_second, hidden):
    assert isinstance(result, tuple) and len(result) == 2, "returns (first group's arrays, second group's arrays)"
    for group, n in zip(result, (n_first, n_second)):
        assert isinstance(group, list) and len(group) == tot_layer, "one array per layer"
        for array in group:
            assert isinstance(array, np.ndarray), type(array)
            assert array.dtype == np.float32, array.dtype
            assert array.shape == (n, hidden), array.shape


def expected_rows(spec, seed, data_name, prompt, cot, questions, tot_layer):
    """(tot_layer, questions, hidden): the last token's state of each layer, per question."""
    rows = [oracle.layer_states(spec, seed, oracle.dataset_text(data_name, prompt, cot, q), tot_layer)[:, -1, :]
            for q in questions]
    return np.stack(rows, axis=1)


def run_case(case, tot_layer=None):
    _, spec, seed, data_name, prompt, cot, first, second = case
    tot_layer = oracle.model(spec, seed).config.num_hidden_layers if tot_layer is None else tot_layer
    result = collected(spec, oracle.weights(spec, seed), data_name, prompt, cot, first, second, tot_layer)
    return result, tot_layer


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_rows_are_last_token_states_of_each_layer(case):
    _, spec, seed, data_name, prompt, cot, first, second = case
    (got_first, got_second), tot_layer = run_case(case)
    for name, got, questions in (("first group", got_first, first), ("second group", got_second, second)):
        want = expected_rows(spec, seed, data_name, prompt, cot, questions, tot_layer)
        assert len(got) == tot_layer
        for layer in range(tot_layer):
            assert np.asarray(got[layer]).shape == want[layer].shape, f"{name}, layer {layer}"
            assert np.allclose(got[layer], want[layer], rtol=1e-5, atol=1e-5), f"{name}, layer {layer}"


def test_layout_two_lists_of_float32_arrays_per_layer():
    result, tot_layer = run_case(CASES[0])
    check_layout(result, tot_layer, len(REVIEWS_POS), len(REVIEWS_NEG), 16)


def test_fewer_layers_than_the_model_has():
    case = CASES[2]
    _, spec, seed, data_name, prompt, cot, first, second = case
    (got_first, got_second), tot_layer = run_case(case, tot_layer=2)
    assert len(got_first) == 2 and len(got_second) == 2
    want = expected_rows(spec, seed, data_name, prompt, cot, second, 2)
    for layer in range(2):
        assert np.allclose(got_second[layer], want[layer], rtol=1e-5, atol=1e-5), f"layer {layer}"


def coded_expectation(data_name, prompt, cot, questions, tot_layer):
    texts = [oracle.dataset_text(data_name, prompt, cot, q) for q in questions]
    want = np.zeros((tot_layer, len(texts), 3), dtype=np.float32)
    for j, text in enumerate(texts):
        want[:, j, 0] = np.arange(tot_layer)
        want[:, j, 1] = len(text.split())  # the last position of n + 1 tokens
        want[:, j, 2] = text_code(text)
    return texts, want


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_each_row_is_its_questions_last_position_in_its_layer(dtype):
    data_name, prompt, cot = "STSA", MAIN_PROMPT, None
    first, second = REVIEWS_POS + REVIEWS_NEG[:1], REVIEWS_NEG[1:] + CITIES_TRUE
    out = collected_coded(data_name, prompt, cot, first, second, 4, 4, dtype)
    result = out["result"]
    check_layout(result, 4, len(first), len(second), 3)
    for group, questions in zip(result, (first, second)):
        _, want = coded_expectation(data_name, prompt, cot, questions, 4)
        for layer in range(4):
            assert np.array_equal(group[layer], want[layer]), f"layer {layer}: {group[layer].tolist()} != {want[layer].tolist()}"


def test_prompts_come_from_the_dataset_processor_in_question_order():
    data_name, prompt, cot = "sarcasm", "Is it sarcastic? ", "Answer yes or no."
    out = collected_coded(data_name, prompt, cot, SARCASTIC, PLAIN, 2, 2, "float32")
    texts = [oracle.dataset_text(data_name, prompt, cot, q) for q in SARCASTIC + PLAIN]
    assert [call[2] for call in out["calls"]] == texts
    assert all(call[:2] == ["LlamaForCausalLM", "PreTrainedTokenizerFast"] for call in out["calls"]), out["calls"]


def test_uses_only_the_first_tot_layer_layers():
    data_name, prompt, cot = "cities", "Judge the statement is True or False.", None
    out = collected_coded(data_name, prompt, cot, CITIES_TRUE, CITIES_FALSE, 2, 5, "float32")
    first, second = out["result"]
    assert len(first) == 2 and len(second) == 2
    for group, questions in ((first, CITIES_TRUE), (second, CITIES_FALSE)):
        _, want = coded_expectation(data_name, prompt, cot, questions, 2)
        for layer in range(2):
            assert np.array_equal(group[layer], want[layer])


def test_fingerprints_tell_the_test_prompts_apart():
    # guards the coded tests above: distinct prompts must get distinct codes
    for data_name, prompt, cot, questions in (
        ("STSA", MAIN_PROMPT, None, REVIEWS_POS + REVIEWS_NEG + CITIES_TRUE),
        ("cities", "Judge the statement is True or False.", None, CITIES_TRUE + CITIES_FALSE),
    ):
        texts = [oracle.dataset_text(data_name, prompt, cot, q) for q in questions]
        assert len({text_code(t) for t in texts}) == len(texts)
