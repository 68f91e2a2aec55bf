"""Driver for `lmr record`: trains tiny language models with `SophiaG` the way the upstream
trains GPT-2 (README "General Usage", train_sophiag.py), and records every call of
`SophiaG.step`, `SophiaG.update_hessian` and `_single_tensor_sophiag`.

The loop: a forward and backward pass on the batch, `optimizer.step(bs=...)`,
`zero_grad(set_to_none=True)`; every k-th iteration, labels sampled from the model's own
output distribution, a backward pass on the cross-entropy with those labels (the
Gauss-Newton-Bartlett estimator of the paper) and `optimizer.update_hessian()`. `bs` is
the number of tokens in a global batch, as train_sophiag.py passes it (total_bs *
block_size: data-parallel ranks x accumulation steps x tokens per micro-batch); this
process sees one micro-batch of it, so bs is larger than the batch here.

Scenarios: parameter groups with and without weight decay (as model.configure_optimizers
makes them), token ids that leave embedding rows without gradient (zero momentum and zero
curvature there); the upstream defaults (bs=5120, steps before any Hessian estimate); a
Hessian estimate before the first step (state created by update_hessian); an idle head
with no gradient; maximize=True; float64 weights; lr = 0. Two things cannot be recorded and
are tested by the property tests instead: the closure argument (a function; skipped here)
and sparse gradients (lmr cannot store a sparse tensor), which `step` rejects.
"""
import torch
from torch import nn
import torch.nn.functional as F

from sophia import SophiaG

torch.manual_seed(2024)


class TinyLM(nn.Module):
    """Token embedding -> tanh MLP -> vocabulary logits (a bigram language model), and a
    second head used only by one scenario."""

    def __init__(self, vocab=10, dim=4, hidden=6):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.fc = nn.Linear(dim, hidden)
        self.lm_head = nn.Linear(hidden, vocab)
        self.aux_head = nn.Linear(hidden, 2)

    def forward(self, idx, head="lm"):
        h = torch.tanh(self.fc(self.wte(idx)))
        return self.lm_head(h) if head == "lm" else self.aux_head(h)


def batch(b, t, vocab_used):
    x = torch.randint(0, vocab_used, (b, t))
    return x, torch.roll(x, -1, dims=1)


def groups(model, weight_decay):
    decay = [model.fc.weight, model.lm_head.weight, model.aux_head.weight]
    no_decay = [model.wte.weight, model.fc.bias, model.lm_head.bias, model.aux_head.bias]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def sampled_loss(logits):
    y_sample = torch.distributions.Categorical(logits=logits).sample()
    return F.cross_entropy(logits.view(-1, logits.size(-1)), y_sample.view(-1), ignore_index=-1)


def train(model, opt, iters, k, b=4, t=6, vocab_used=7, bs="tokens", hessian_first=False, sign=1.0, aux_every=0):
    """bs: "tokens" passes the batch's token count, None calls step() with its default."""
    for it in range(iters):
        x, y = batch(b, t, vocab_used)
        if hessian_first and it == 0:
            sampled_loss(model(x)).backward()
            opt.update_hessian()
            opt.zero_grad(set_to_none=True)
        if aux_every and it % aux_every == aux_every - 1:
            logits = model(x, "aux")
            loss = F.cross_entropy(logits.view(-1, 2), (y % 2).view(-1))
        else:
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        (sign * loss).backward()
        if bs is None:
            opt.step()
        else:
            opt.step(bs=b * t if bs == "tokens" else bs)
        opt.zero_grad(set_to_none=True)
        if k and it % k == k - 1:
            sampled_loss(model(x)).backward()
            opt.update_hessian()
            opt.zero_grad(set_to_none=True)


# 1. the GPT-2 recipe in small: decayed and undecayed groups, a Hessian estimate every 2
#    iterations; token ids 7..9 never occur, so their embedding rows get no gradient
model = TinyLM()
opt = SophiaG(groups(model, 0.2), lr=2e-2, betas=(0.965, 0.99), rho=0.05)
train(model, opt, iters=6, k=2, bs=2048)

# 2. the upstream defaults (lr 1e-4, betas (0.965, 0.99), rho 0.04, weight decay 0.1) and
#    step()'s default bs; no Hessian estimate yet: every coordinate is clipped
model = TinyLM()
opt = SophiaG(model.parameters())
train(model, opt, iters=2, k=0, bs=None)

# 3. a Hessian estimate before the first step (update_hessian creates the state); a faster
#    Hessian average (beta2 0.9)
model = TinyLM()
opt = SophiaG(groups(model, 0.1), lr=1e-2, betas=(0.9, 0.9), rho=0.05)
train(model, opt, iters=3, k=2, bs=512, hessian_first=True)

# 4. an auxiliary head trained every third iteration: the idle head (and, on aux
#    iterations, lm_head) has no gradient and is skipped
model = TinyLM()
opt = SophiaG(model.parameters(), lr=1e-2, rho=0.03, weight_decay=0.05)
train(model, opt, iters=3, k=2, bs=2048, aux_every=3)

# 5. maximize=True on the log-likelihood (the negated loss)
model = TinyLM()
opt = SophiaG(model.parameters(), lr=1e-2, rho=0.04, weight_decay=0.1, maximize=True)
train(model, opt, iters=2, k=1, bs=2048, sign=-1.0)

# 6. float64 weights
model = TinyLM().double()
opt = SophiaG(groups(model, 0.3), lr=3e-2, betas=(0.8, 0.9), rho=0.01)
train(model, opt, iters=2, k=1, bs=8192)

# 7. lr = 0: the weights stay, the momentum and the step counter still move
model = TinyLM()
opt = SophiaG(model.parameters(), lr=0.0, rho=0.04)
train(model, opt, iters=2, k=1, bs=2048)
