"""Driver for `lmr record`: trains tiny models with `Lion` and records every `Lion.step`.

Each scenario is what a training loop does: build a model, build the optimizer over its
parameters (or over parameter groups), then repeat zero_grad / forward / backward / step.
`lmr record` keeps, per step, the optimizer as it was before the call (param_groups with
the Parameters and their .grad, and the per-parameter state) and as it was after, so the
replay rebuilds the optimizer in the middle of training and checks one step.

Scenarios: two parameter groups with their own lr and weight decay, an embedding whose
unused rows have zero gradients (the sign of a zero interpolation); the upstream defaults;
a two-headed model whose idle head has no gradient (set_to_none) or a zero gradient
(set_to_none=False); other betas; float64 weights and strong weight decay; lr = 0.
The closure argument cannot be recorded (a function): it is skipped here and tested by the
property tests.
"""
import torch
from torch import nn
import torch.nn.functional as F

from lion.lion_pytorch import Lion

torch.manual_seed(1234)


class TokenClassifier(nn.Module):
    """Embedding -> mean over the sequence -> linear -> tanh -> two heads."""

    def __init__(self, vocab=12, dim=4, hidden=6, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.body = nn.Linear(dim, hidden)
        self.head_a = nn.Linear(hidden, classes)
        self.head_b = nn.Linear(hidden, 2)

    def forward(self, tokens, head="a"):
        h = torch.tanh(self.body(self.embed(tokens).mean(dim=1)))
        return self.head_a(h) if head == "a" else self.head_b(h)


def batch(n, vocab_used, classes, seq=5):
    return torch.randint(0, vocab_used, (n, seq)), torch.randint(0, classes, (n,))


def train(model, opt, steps, heads=("a",), set_to_none=True, vocab_used=8):
    for t in range(steps):
        head = heads[t % len(heads)]
        classes = 3 if head == "a" else 2
        tokens, labels = batch(6, vocab_used, classes)
        opt.zero_grad(set_to_none=set_to_none)
        loss = F.cross_entropy(model(tokens, head), labels)
        loss.backward()
        opt.step()


# 1. two parameter groups (decayed weights, undecayed biases and embedding), several steps;
#    tokens 8..11 never occur, so their embedding rows get exact zero gradients
model = TokenClassifier()
decay = [model.body.weight, model.head_a.weight]
no_decay = [model.embed.weight, model.body.bias, model.head_a.bias]
opt = Lion([{"params": decay, "weight_decay": 1.0}, {"params": no_decay, "lr": 3e-3}], lr=1e-2, weight_decay=0.0)
train(model, opt, steps=4)

# 2. the upstream defaults (lr 1e-4, betas (0.9, 0.99), no weight decay), over model.parameters()
model = TokenClassifier()
opt = Lion(model.parameters())
train(model, opt, steps=2)

# 3. two heads used in turn; zero_grad(set_to_none=True): the idle head has .grad None and is
#    skipped (no state until its first gradient); other betas and weight decay
model = TokenClassifier()
opt = Lion(model.parameters(), lr=5e-3, betas=(0.95, 0.98), weight_decay=0.1)
train(model, opt, steps=4, heads=("a", "b"))

# 4. the same with zero_grad(set_to_none=False): the idle head has a zero gradient, so it is
#    stepped with the sign of the decayed momentum alone
model = TokenClassifier()
opt = Lion(model.parameters(), lr=5e-3, betas=(0.9, 0.99), weight_decay=0.2)
train(model, opt, steps=4, heads=("a", "b"), set_to_none=False)

# 5. a frozen embedding (requires_grad False: never a gradient), float64 weights, strong decay
model = TokenClassifier().double()
model.embed.weight.requires_grad_(False)
opt = Lion(model.parameters(), lr=2e-2, betas=(0.5, 0.9), weight_decay=2.0)
train(model, opt, steps=3)

# 6. lr = 0: the weights stay, the momentum still moves
model = TokenClassifier()
opt = Lion(model.parameters(), lr=0.0, weight_decay=0.5)
train(model, opt, steps=2)
