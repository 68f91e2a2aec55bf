"""Driver for `lmr record`: calls `preference_loss` on seeded inputs covering the paper's cases.

Runs against the reference from the workspace root. `trainers.py` imports the training stack
at module level; `lmr record` runs the grader's tests/conftest.py first, which registers
stand-ins for it, so `import trainers` works here as it does under the tests:

    lmr record tasks/dpo-preference-loss --mirror /work/.mirror
"""
import torch

from trainers import preference_loss

gen = torch.Generator().manual_seed(1234)


def logps(n, dtype=torch.float32, low=-60.0, high=-2.0):
    """n sequence log-probabilities, uniformly in [low, high)."""
    return (torch.rand(n, generator=gen, dtype=torch.float64) * (high - low) + low).to(dtype)


def batch(n, dtype=torch.float32):
    return [logps(n, dtype) for _ in range(4)]


# Plain DPO over several betas and batch sizes (1 included).
for beta, n in ((0.1, 1), (0.1, 8), (0.5, 5), (0.05, 3), (2.0, 6)):
    preference_loss(*batch(n), beta)

# Conservative DPO (label smoothing), positional and keyword.
for beta, eps, n in ((0.1, 0.1, 6), (0.5, 0.3, 4), (1.0, 0.5, 3), (0.2, 0.25, 1)):
    preference_loss(*batch(n), beta, label_smoothing=eps)

# IPO (label smoothing must not matter there).
for beta, eps, n in ((0.1, 0.0, 6), (0.5, 0.0, 3), (0.01, 0.0, 4), (0.25, 0.2, 5)):
    preference_loss(*batch(n), beta, label_smoothing=eps, ipo=True)

# Reference-free, with each loss.
preference_loss(*batch(5), 0.1, reference_free=True)
preference_loss(*batch(4), 0.3, label_smoothing=0.2, reference_free=True)
preference_loss(*batch(4), 0.2, ipo=True, reference_free=True)

# float64 inputs keep their dtype.
preference_loss(*batch(5, torch.float64), 0.1)
preference_loss(*batch(3, torch.float64), 0.4, label_smoothing=0.15)
preference_loss(*batch(3, torch.float64), 0.4, ipo=True)

# Extreme margins: |beta * h| in the hundreds, where a naive log(sigmoid(x)) gives inf/nan.
big = torch.tensor([-1.0, -900.0, -5.0, -700.0])
small = torch.tensor([-900.0, -1.0, -700.0, -5.0])
same = torch.tensor([-5.0, -5.0, -5.0, -5.0])
preference_loss(big, small, same, same, 5.0)
preference_loss(big, small, same, same, 5.0, label_smoothing=0.1)
preference_loss(big.double(), small.double(), same.double(), same.double(), 1.0)

# Zero margin (policy == reference): DPO loss is log 2 whatever beta.
z = logps(4)
preference_loss(z, z + 0.0, z + 0.0, z + 0.0, 0.3)

# Empty batch.
e = torch.zeros(0)
preference_loss(e, e, e, e, 0.1)
