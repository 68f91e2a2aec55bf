"""Driver for `lmr record`: calls `tdpo_loss` the way the upstream trainer does.

Written for lmr (not upstream code). `BasicTrainer.tdpo_concatenated_forward` runs the
policy and the frozen reference model on the chosen and rejected responses stacked into
one batch, casts both logits to float32 and hands them to `_tdpo_get_batch_logps`, whose
summed per-token log-ratio margins and summed per-position KL divergences are split back
into chosen and rejected halves and passed to `tdpo_loss`. This driver does the same on
small seeded toy "models": reference logits drawn at random, policy logits the reference
plus a perturbation (a policy that has drifted from its SFT start), labels with the prompt
and the padding set to -100. So the four tensors are what the trainer produces: float32,
shape (batch,), carrying gradient (from the policy logits), position KLs non-negative.

Run from the task's reference tree; `lmr record` executes tests/conftest.py first, whose
stand-ins let `import trainers` succeed on the task's base:

    lmr record tasks/tdpo-loss --mirror /work/.mirror
"""
import torch

from trainers import _tdpo_get_batch_logps, tdpo_loss

gen = torch.Generator().manual_seed(20240418)


def trainer_inputs(batch, seq_len, vocab, drift, prompt_max=4):
    """The four loss inputs for `batch` preference pairs, as tdpo_concatenated_forward makes them."""
    n = 2 * batch  # chosen rows first, then rejected rows, as concatenated_inputs stacks them
    reference_logits = 2.0 * torch.randn(n, seq_len, vocab, generator=gen)
    policy_logits = (reference_logits + drift * torch.randn(n, seq_len, vocab, generator=gen)).requires_grad_(True)
    labels = torch.randint(0, vocab, (n, seq_len), generator=gen)
    for row in range(n):
        prompt = int(torch.randint(1, prompt_max + 1, (1,), generator=gen))
        response = int(torch.randint(1, seq_len - prompt + 1, (1,), generator=gen))
        labels[row, :prompt] = -100  # the prompt is not scored
        labels[row, prompt + response:] = -100  # padding
    margins, position_kl, _ = _tdpo_get_batch_logps(policy_logits, reference_logits, labels, average_log_prob=False)
    return margins[:batch], margins[batch:], position_kl[:batch], position_kl[batch:]


# TDPO1 (loss.if_tdpo2=false, the upstream config's default), as get_batch_metrics calls it.
for beta, batch, drift in ((0.1, 4, 0.5), (0.5, 3, 1.0), (0.1, 1, 0.3)):
    tdpo_loss(*trainer_inputs(batch, 12, 16, drift), beta=beta, alpha=0.5, if_tdpo2=False)

# TDPO2 over several alphas (the README's recommended run uses alpha 0.5, beta 0.1).
for beta, alpha, batch, drift in ((0.1, 0.5, 4, 0.5), (0.1, 0.1, 5, 0.8), (0.5, 1.0, 3, 1.0),
                                  (0.2, 2.0, 4, 0.6), (1.0, 0.3, 2, 1.5), (0.1, 0.5, 1, 0.4)):
    tdpo_loss(*trainer_inputs(batch, 12, 16, drift), beta=beta, alpha=alpha, if_tdpo2=True)

# The signature's defaults (alpha 0.5, TDPO2) and positional arguments.
tdpo_loss(*trainer_inputs(3, 10, 16, 0.7), 0.1)
tdpo_loss(*trainer_inputs(3, 10, 16, 0.7), 0.3, 0.8)
tdpo_loss(*trainer_inputs(3, 10, 16, 0.7), 0.3, 0.8, False)

# Policy equal to the reference (the first step from the SFT model): margins and KLs are zero.
same = trainer_inputs(3, 10, 16, 0.0)
tdpo_loss(*same, beta=0.1, alpha=0.5, if_tdpo2=True)
tdpo_loss(*same, beta=0.1, alpha=0.5, if_tdpo2=False)

# Long responses from a policy far from its reference: summed margins and KLs in the
# hundreds, so beta times the logit reaches a few hundred, where log(sigmoid(.)) of float32
# underflows to -inf.
for if_tdpo2 in (True, False):
    tdpo_loss(*trainer_inputs(6, 160, 32, 4.0, prompt_max=8), beta=1.0, alpha=0.5, if_tdpo2=if_tdpo2)
