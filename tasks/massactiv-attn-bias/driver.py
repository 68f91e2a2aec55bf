"""Calls CausalSelfAttention.forward of gpt-2/model_attn_bias.py (attention with explicit
attention biases) on seeded inputs, as the GPT's blocks call it: x of shape (B, T, n_embd)
after the first layer norm, the module in eval mode (or in training mode with dropout 0).

The module's parameters are those __init__ creates, with the biases redrawn at a scale a
trained model reaches (std 0.5 to 2 instead of the initial 0.02), so that the bias slot takes
a real share of the attention and a wrong use of it shows in the output. One input has a
massive activation on its first token, the phenomenon the paper studies.

gpt-2/ is not a package; it is imported as the namespace package `gpt-2` from the tree root.
"""
import importlib

import torch

mab = importlib.import_module("gpt-2.model_attn_bias")


def module(n_head, n_embd, block_size=16, bias=True, dropout=0.0, bias_scale=1.0, dtype=torch.float32):
    config = mab.GPTConfig(block_size=block_size, vocab_size=32, n_layer=1, n_head=n_head, n_embd=n_embd, dropout=dropout, bias=bias)
    m = mab.CausalSelfAttention(config)
    with torch.no_grad():
        m.k_bias.normal_(0.0, bias_scale)
        m.v_bias.normal_(0.0, bias_scale)
        if bias:
            m.c_attn.bias.normal_(0.0, 0.1)
            m.c_proj.bias.normal_(0.0, 0.1)
    return m.to(dtype).eval()


def run(m, B, T, train=False, scale=1.0, massive=None):
    x = torch.randn(B, T, m.n_embd, dtype=m.k_bias.dtype) * scale
    if massive is not None:
        x[:, 0, massive] = 60.0
    if train:
        m.train()
    m(x)
    m.eval()


run(module(2, 8), 2, 5)
run(module(4, 16), 1, 1)                          # a single token: only the bias slot and itself
run(module(4, 32, block_size=16, bias=False), 3, 16)   # a full block, no Linear biases
run(module(1, 6, bias_scale=2.0), 2, 7)           # one head
run(module(3, 12, dropout=0.3), 2, 9)             # dropout configured, eval mode: no dropout
run(module(2, 8), 2, 6, train=True)               # training mode with dropout 0
run(module(2, 16, dtype=torch.float64), 2, 11)    # float64 end to end
run(module(4, 16, bias_scale=0.5), 2, 12, massive=3)   # a massive activation on the first token
run(module(2, 8, block_size=32), 1, 32, scale=3.0)
