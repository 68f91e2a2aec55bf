"""Driver for `lmr record`: builds small seeded `HyenaOperator`s and records `forward` calls.

Each scenario builds the operator the way the upstream's own `__main__` block does
(`HyenaOperator(d_model, l_max, order, filter_order, ...)`), at tiny widths so the replay
runs in a second on CPU, and calls it on a batch of shape (batch, length, d_model), as a
language model's mixer layer does. `lmr record` stores the module as it was at the call
(its parameters and buffers) and the output.

Scenarios: order 2 (the paper's default) at full length l_max and at a shorter length; order
3 and order 4 (the deeper recurrences of the paper's Section 3); a single-token sequence;
float64 weights; other filter settings (wider positional embedding, other frequency, no
exponential modulation, a shift); a module with dropout set but in eval mode; a module whose
weights were moved away from their initialisation, as training leaves them.
"""
import torch

from standalone_hyena import HyenaOperator

torch.manual_seed(20230221)


def batch(b, l, d, dtype=torch.float32):
    return torch.randn(b, l, d, dtype=dtype)


# 1. order 2 at full length and at a shorter length
op = HyenaOperator(d_model=8, l_max=32, order=2, filter_order=16)
op(batch(2, 32, 8))
op(batch(3, 19, 8))

# 2. order 3
op = HyenaOperator(d_model=8, l_max=24, order=3, filter_order=16)
op(batch(2, 24, 8))
op(batch(1, 10, 8))

# 3. order 4, narrow model
op = HyenaOperator(d_model=4, l_max=16, order=4, filter_order=8)
op(batch(2, 16, 4))

# 4. a single token
op = HyenaOperator(d_model=8, l_max=16, order=2, filter_order=8)
op(batch(2, 1, 8))

# 5. float64 weights and inputs
op = HyenaOperator(d_model=6, l_max=20, order=3, filter_order=8).double()
op(batch(2, 20, 6, dtype=torch.float64))

# 6. other filter settings: emb_dim 5, frequency 10, no modulation / a shift
op = HyenaOperator(d_model=8, l_max=32, order=2, filter_order=16, emb_dim=5, w=10, modulate=False)
op(batch(2, 32, 8))
op = HyenaOperator(d_model=8, l_max=32, order=3, filter_order=16, shift=0.5, fast_decay_pct=0.5)
op(batch(2, 27, 8))

# 7. dropout configured, eval mode: dropout inactive
op = HyenaOperator(d_model=8, l_max=16, order=3, filter_order=8, dropout=0.3).eval()
op(batch(2, 16, 8))

# 8. weights moved away from their initialisation (as training leaves them): every
#    parameter perturbed, so no test can rely on the init values
op = HyenaOperator(d_model=8, l_max=24, order=3, filter_order=16)
with torch.no_grad():
    for p in op.parameters():
        p.add_(0.2 * torch.randn_like(p))
op(batch(2, 24, 8))
