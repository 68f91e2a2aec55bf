"""The tests' own way to the expected values (oracle side only; never sent to the candidate).

The representation of decoder layer i is the output of its post-attention RMSNorm. In the
LLaMA/Mistral decoder layer that output is exactly what the layer's MLP receives, so the
oracle reads it with forward *pre*-hooks on `model.model.layers[i].mlp`, a route the code
under test does not take (it traces the norm modules by name), and runs the model itself.
"""
import numpy as np
import torch

from tiny_llm import make_tokenizer, model_from_weights, seeded_weights

_MODELS = {}


def weights(spec, seed):
    return seeded_weights(spec, seed)


def model(spec, seed):
    key = (spec, seed)
    if key not in _MODELS:
        _MODELS[key] = model_from_weights(spec, seeded_weights(spec, seed))
    return _MODELS[key]


def token_count(text):
    return len(make_tokenizer()(text)["input_ids"])


def layer_states(spec, seed, text, layers=None):
    """float32 array (layers, tokens, hidden): every decoder layer's MLP input for `text`."""
    net = model(spec, seed)
    blocks = net.model.layers
    count = len(blocks) if layers is None else layers
    seen = {}
    handles = [
        block.mlp.register_forward_pre_hook(lambda _m, args, i=i: seen.__setitem__(i, args[0].detach()))
        for i, block in enumerate(blocks)
    ]
    try:
        encoded = make_tokenizer()(text, return_tensors="pt")
        with torch.no_grad():
            net(input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"])
    finally:
        for handle in handles:
            handle.remove()
    return np.stack([seen[i][0].numpy() for i in range(count)])


def norm_gains(spec, seed, layers):
    """float32 array (layers, hidden): the gain vector of each post-attention norm."""
    w = seeded_weights(spec, seed)
    return np.stack([w[f"model.layers.{i}.post_attention_layernorm.weight"].numpy() for i in range(layers)])


def dataset_text(data_name, prompt, cot, question):
    """The model input dataset.py's DataProcessing.get_prompt makes for a dataset (our reading of it)."""
    if data_name in ("common", "cities", "counterfact"):
        return prompt + " " + question
    if data_name in ("STSA", "coinflip", "IMDb", "hateeval"):
        return question + " " + prompt
    if data_name in ("sarcasm", "StrategyQA"):
        return prompt + question + " " + cot
    raise KeyError(data_name)
