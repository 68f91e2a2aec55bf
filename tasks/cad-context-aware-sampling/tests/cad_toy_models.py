"""Tiny language models and prompts for the CAD tests (ours, not upstream code).

Used by the grader tests and by generators/cad_samples.py. The models are 2-layer GPT-2s
built from a config, whose weights come from numpy's RandomState (the same on every torch
version; nothing is downloaded). A prompt is `input_ids = [context ; question]` of shape
(1, C + Q) together with the 1-D tensor of its C context ids.
"""
import numpy as np
import torch
import transformers

VOCAB = 40
NO_EOS = 10_000  # an id no token has: decoding never stops early
MODEL_SEEDS = (0, 1, 2)


def tiny_lm(seed, vocab=VOCAB, scale=0.3):
    """A 2-layer GPT-2 whose weights come from numpy's RandomState(seed)."""
    config = transformers.GPT2Config(
        vocab_size=vocab, n_positions=96, n_embd=32, n_layer=2, n_head=2,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    )
    model = transformers.GPT2LMHeadModel(config)
    rs = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            noise = torch.from_numpy(rs.standard_normal(tuple(p.shape)).astype(np.float32))
            p.copy_(1.0 + 0.1 * noise if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")) else scale * noise)
    return model.eval()


class Tok:
    """The tokenizer argument: only its end-of-sequence id matters to decoding."""

    def __init__(self, eos_token_id=NO_EOS):
        self.eos_token_id = eos_token_id
        self.pad_token_id = None

    def decode(self, ids, skip_special_tokens=False):
        return " ".join(str(int(i)) for i in ids)


def make_prompt(seed, context_len, question_len, vocab=VOCAB):
    """input_ids = [context ; question] of shape (1, C + Q), and the 1-D context ids."""
    g = np.random.RandomState(1000 + seed)
    context = torch.from_numpy(g.randint(2, vocab, size=context_len)).long()
    question = torch.from_numpy(g.randint(2, vocab, size=question_len)).long()
    return torch.cat([context, question]).unsqueeze(0), context


def next_logits(model, ids):
    """The model's logits for the token after `ids` (1, T), as float64."""
    with torch.no_grad():
        return model(ids).logits[0, -1, :].double()


def contrastive_logits(model, ids, context_len, alpha):
    """(1 + alpha) * logits with the context - alpha * logits without it, for the next token."""
    return (1 + alpha) * next_logits(model, ids) - alpha * next_logits(model, ids[:, context_len:])
