"""Writes fixtures/reference_states.json: the reference's per-layer states on seeded tiny models.

Run by `lmr record` from the root of the reference tree, after tests/candidate_setup.py (the
stand-ins for sagemaker, baukit and datasets), with LMR_FIXTURES_OUT naming the output folder.
Inputs are ours (tests/tiny_llm.py: seeded weights, a word-level tokenizer; questions and
prompts written here); only numbers computed by the reference are stored.
"""
import json
import os
import random
import sys

import numpy as np
import torch

random.seed(0)
np.random.seed(0)
torch.manual_seed(0)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from tiny_llm import SPECS, make_tokenizer, model_from_weights, seeded_weights  # noqa: E402

from dataset import DataProcessing  # noqa: E402
from main import collect_hidden_states  # noqa: E402
from utils import LLM  # noqa: E402

COLLECT = [
    # name, spec, seed, dataset, prompt, cot, first group, second group
    ("stsa-llama-f32", "llama-3x16", 40, "STSA",
     "According to the sentence, judge the emotion is Positive or Negative.", None,
     ["warm , funny and smart", "the best movie of the year", "a gripping and moving film ."],
     ["the plot never comes together", "a dull and lifeless mess ."]),
    ("cities-mistral-f32", "mistral-2x16", 41, "cities",
     "Judge the statement is True or False.", None,
     ["The city of Oslo is in Norway.", "The city of Cairo is in Japan."],
     ["The city of Lima is in France.", "The city of Paris is in Chile.", "The city of Tokyo is in Spain."]),
    ("sarcasm-llama-f32", "llama-4x24", 42, "sarcasm",
     "Task: detect sarcasm. ", "Is there any sarcasm in this sentence? Please answer Yes or No.",
     ["man tells his cat he loves mondays"],
     ["local weather forecast predicts rain again", "area man completely shocked by news"]),
]

TRACED = [
    # name, spec, seed, layer_num, prompts
    ("llama-4x24-two-layers", "llama-4x24", 43, 2,
     ["the city of paris is in france . judge the statement is true or false .", "i loved it"]),
    ("mistral-2x16-f32", "mistral-2x16", 44, 2, ["the best movie of the year"]),
]


def as_lists(array):
    return np.asarray(array, dtype=np.float64).tolist()


collect_cases = []
for name, spec, seed, data_name, prompt, cot, first, second in COLLECT:
    model = model_from_weights(spec, seeded_weights(spec, seed))
    tot_layer = SPECS[spec][1]
    DP = DataProcessing(data_path="unused", data_name=data_name, noise="non-noise")
    Model = LLM(cuda_id=0, layer_num=tot_layer, quant=16)
    got_first, got_second = collect_hidden_states(first, second, DP, prompt, cot, make_tokenizer(), model, Model, tot_layer)
    collect_cases.append({
        "name": name, "spec": spec, "seed": seed, "dataset": data_name, "prompt": prompt, "cot": cot,
        "first": first, "second": second, "tot_layer": tot_layer,
        "first_states": [as_lists(a) for a in got_first], "second_states": [as_lists(a) for a in got_second],
    })

traced_cases = []
for name, spec, seed, layer_num, prompts in TRACED:
    model = model_from_weights(spec, seeded_weights(spec, seed))
    llm = LLM(cuda_id=0, layer_num=layer_num, quant=16)
    states = []
    for prompt in prompts:
        with torch.no_grad():
            states.append(as_lists(llm.get_hidden_states(model, make_tokenizer(), prompt).numpy()))
    traced_cases.append({"name": name, "spec": spec, "seed": seed, "layer_num": layer_num,
                         "prompts": prompts, "states": states})

out = os.path.join(os.environ["LMR_FIXTURES_OUT"], "fixtures", "reference_states.json")
os.makedirs(os.path.dirname(out), exist_ok=True)
with open(out, "w") as f:
    f.write(json.dumps({"collect": collect_cases, "traced": traced_cases}, indent=None, sort_keys=True) + "\n")
