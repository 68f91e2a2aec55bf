"""Driver for `lmr record`: calls `SPINTrainer.spin_loss` the way the upstream trainer does.

Written for lmr (not upstream code). `SPINTrainer.get_batch_metrics` runs the model being
trained (the main player) and the frozen opponent (the previous iteration, `ref_model`) on
the real (human) responses and the opponent's own generations, stacked into one batch by
`concatenated_forward`, turns each model's float32 logits into summed response
log-probabilities with `_get_batch_logps`, and passes the four halves to `spin_loss`. This
driver does the same on small seeded toy "models": opponent logits drawn at random, the
main player's logits the opponent's plus a perturbation (iteration t+1 starts from the
opponent's weights), real responses drawn uniformly, generated responses sampled from the
opponent's own next-token distribution, prompts and padding labelled -100. The summed
log-probabilities come from the upstream's own `_get_batch_logps`, run on a helper object.

The trainer itself is not constructed (its constructor needs models, a dataset, an
accelerator): `self` is made with object.__new__ and given the two attributes the method
reads, `beta` and `loss_type`, as the constructor stores them.

Run from the task's reference tree; `lmr record` executes tests/conftest.py first, whose
stand-ins let `spin.alignment` import on the task's base:

    lmr record tasks/spin-loss --mirror /work/.mirror
"""
import torch

from spin.alignment.trainer import SPINTrainer

gen = torch.Generator().manual_seed(20240102)

logps_helper = object.__new__(SPINTrainer)
logps_helper.is_encoder_decoder = False  # SPIN trains decoder-only models
logps_helper.label_pad_token_id = -100


def trainer(beta, loss_type="sigmoid"):
    t = object.__new__(SPINTrainer)
    t.beta = beta
    t.loss_type = loss_type
    return t


def summed_logps(logits, labels):
    return logps_helper._get_batch_logps(logits, labels, average_log_prob=False)


def spin_inputs(batch, seq_len, vocab, drift, prompt_max=4):
    """(policy_real, policy_generated, opponent_real, opponent_generated) for `batch` prompts."""
    n = 2 * batch  # real rows first, then generated rows, as concatenated_inputs stacks them
    opponent_logits = 2.0 * torch.randn(n, seq_len, vocab, generator=gen)
    policy_logits = (opponent_logits + drift * torch.randn(n, seq_len, vocab, generator=gen)).requires_grad_(True)
    labels = torch.randint(0, vocab, (n, seq_len), generator=gen)
    # Generated responses: the opponent's own samples (label t is predicted at position t-1).
    sampled = torch.multinomial(opponent_logits[batch:].reshape(-1, vocab).softmax(-1), 1, generator=gen)
    labels[batch:, 1:] = sampled.reshape(batch, seq_len)[:, :-1]
    for row in range(n):
        prompt = int(torch.randint(1, prompt_max + 1, (1,), generator=gen))
        response = int(torch.randint(1, seq_len - prompt + 1, (1,), generator=gen))
        labels[row, :prompt] = -100  # the prompt is not scored
        labels[row, prompt + response:] = -100  # padding
    policy = summed_logps(policy_logits, labels)
    with torch.no_grad():
        opponent = summed_logps(opponent_logits, labels)
    return policy[:batch], policy[batch:], opponent[:batch], opponent[batch:]


# The default SPIN loss (logistic), as get_batch_metrics calls it (beta 0.1 in configs/).
for beta, batch, drift in ((0.1, 4, 0.5), (0.1, 1, 0.3), (0.5, 3, 1.0), (2.0, 5, 0.4)):
    trainer(beta).spin_loss(*spin_inputs(batch, 12, 16, drift))

# The hinge loss, with pairs on both sides of the hinge.
for beta, batch, drift in ((0.1, 4, 0.5), (0.5, 4, 1.2), (2.0, 3, 0.8), (0.1, 1, 0.3)):
    trainer(beta, "hinge").spin_loss(*spin_inputs(batch, 12, 16, drift))

# Reference-free, for each loss (keyword and positional).
trainer(0.1).spin_loss(*spin_inputs(3, 12, 16, 0.6), reference_free=True)
trainer(0.5, "hinge").spin_loss(*spin_inputs(3, 12, 16, 0.6), True)
trainer(0.3).spin_loss(*spin_inputs(2, 12, 16, 0.6), reference_free=False)

# The first step of an iteration: the main player equals the opponent.
same = spin_inputs(3, 10, 16, 0.0)
trainer(0.1).spin_loss(*same)
trainer(0.1, "hinge").spin_loss(*same)

# Long responses from a main player far from the opponent: log-probabilities in the
# hundreds, so beta times the logit reaches a few hundred, where log(sigmoid(.)) of float32
# underflows to -inf.
trainer(1.0).spin_loss(*spin_inputs(6, 160, 32, 4.0, prompt_max=8))
trainer(1.0, "hinge").spin_loss(*spin_inputs(4, 160, 32, 4.0, prompt_max=8))

# A loss type the method does not know: the recording keeps the ValueError.
try:
    trainer(0.1, "ipo").spin_loss(*spin_inputs(2, 10, 16, 0.5))
except ValueError:
    pass
