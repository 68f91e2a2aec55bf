"""A tiny random LLaMA for the DoLa tests (ours, not upstream code).

Built from a fixed config and seed with the vendored transformers 4.28.1 (which DoLa
modified so that `LlamaForCausalLM.forward(..., early_exit_layers=[...])` returns the
early-exit logits of the requested layers); nothing is downloaded. Four decoder layers of
width 16 over a vocabulary of 48 tokens: early-exit layers 0 (the embeddings) to 4 (the
final, normed layer). The weights are scaled up from the default init (std 0.02; the output head
more than the rest) so that
the layers' next-token distributions are peaked and differ from layer to layer, as a
trained model's do; otherwise every distribution would be close to uniform.
"""
import torch

from transformers.models.llama.configuration_llama import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaForCausalLM

VOCAB = 48
N_LAYERS = 4
PAD, BOS, EOS = 0, 1, 2


def make_model(seed=0, scale=12.0, head_scale=3.0):
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=N_LAYERS,
        num_attention_heads=2,
        max_position_embeddings=64,
        rms_norm_eps=1e-6,
        pad_token_id=PAD,
        bos_token_id=BOS,
        eos_token_id=EOS,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                p.mul_(scale)
        model.lm_head.weight.mul_(head_scale)
    model.eval()
    return model


def prompt(seed, length):
    """A prompt of `length` ordinary tokens (ids 3..VOCAB-1) after BOS, shape (1, length + 1)."""
    g = torch.Generator().manual_seed(seed)
    body = torch.randint(3, VOCAB, (1, length), generator=g)
    return torch.cat([torch.tensor([[BOS]]), body], dim=1)
