"""Driver for `lmr record`: calls `CustomLoss.forward` as the evaluator's training step does.

In the upstream, `BERTModelModule.compute_loss_and_scores` scores each example twice with its
regressor (an `nn.Linear` over [BERT pooled output ; ResNet features], so each score tensor
has shape (B, 1)): once for (image, hypothesis, premise caption) and once for (image,
hypothesis, update). It then calls `CustomLoss()(score_hypo_premise, score_hypo_update,
update_types)`, with `update_types` a float32 tensor of shape (B,) holding +1 for a
strengthener and -1 for a weakener (`train` builds it with torch.tensor(..., float32)).

Here a tiny seeded regressor over random features stands in for the encoders, so the
scores carry autograd history as in training. Cases: batch sizes 1 to 16, mixed, all-
strengthener and all-weakener batches, equal scores (zero margins), scores of shape (B,)
as well as (B, 1), float64, and margins of either sign up to about 15 in size.
"""
import torch
from torch import nn

from Evaluator.visual_text_training import CustomLoss

torch.manual_seed(2412)

FEATURES = 6
regressor = nn.Linear(FEATURES, 1)
loss_fn = CustomLoss()


def labels_of(kinds, dtype=torch.float32):
    """+1 for a strengthener ("s"), -1 for a weakener ("w"), as process_single_df maps them."""
    return torch.tensor([1 if k == "s" else -1 for k in kinds], dtype=dtype)


def scores(batch, scale=1.0, dtype=torch.float32, model=regressor):
    features = torch.randn(batch, FEATURES, dtype=dtype) * scale
    return model(features)


# typical training batches: (B, 1) scores from the regressor, mixed labels
for kinds in ("s", "w", "sw", "swwsw", "ssswwwsw", "wswswswsswwsswsw"):
    loss_fn(scores(len(kinds)), scores(len(kinds)), labels_of(kinds))

# one-sided batches
loss_fn(scores(4), scores(4), labels_of("ssss"))
loss_fn(scores(4), scores(4), labels_of("wwww"))

# equal scores: every margin is zero
same = scores(3)
loss_fn(same, same.clone(), labels_of("sws"))

# scores of shape (B,) (a squeezed regressor output)
loss_fn(scores(5).view(-1), scores(5).view(-1), labels_of("swssw"))

# larger margins of both signs (a regressor late in training), within float32's reach
loss_fn(scores(6, scale=6.0), scores(6, scale=6.0), labels_of("swswsw"))
loss_fn(torch.tensor([[-7.5], [6.0], [0.25]]), torch.tensor([[7.0], [-8.0], [0.5]]), labels_of("sws"))

# float64 end to end
regressor64 = nn.Linear(FEATURES, 1).double()
loss_fn(scores(7, dtype=torch.float64, model=regressor64), scores(7, dtype=torch.float64, model=regressor64), labels_of("wwsswsw", torch.float64))

# detached scores (as in evaluation, under torch.no_grad)
with torch.no_grad():
    loss_fn(scores(5), scores(5), labels_of("sswws"))
