"""Driver for `lmr record`: calls focal_loss.forward (model.py) the way ERGO's model does.

LongformerCausalModel builds focal_loss(alpha=args.class_weight, gamma=args.gamma,
num_classes=args.y_class) (train.py's defaults: class_weight 0.75, gamma 2, y_class 2) and
calls it on the classifier's logits for all event pairs of a batch, a float32 tensor
(n_pairs, y_class), with the gold labels, an int64 tensor (n_pairs,). The calls below
build the loss through its own constructor with each of its options (alpha as a scalar
and as a per-class list, gamma, num_classes, size_average) and cover the shapes forward
accepts (2-D, and 3-D logits with 2-D labels, which forward flattens), one pair, labels
of a single class, and confident logits (large gaps).
"""
import torch

from model import focal_loss

g = torch.Generator().manual_seed(2022)


def logits(*shape, scale=2.0):
    return scale * torch.randn(*shape, generator=g)


def labels(*shape, classes=2):
    return torch.randint(0, classes, shape, generator=g)


# train.py's configuration: class_weight 0.75, gamma 2, two classes, mean
loss = focal_loss(alpha=0.75, gamma=2, num_classes=2)
loss(logits(12, 2), labels(12))
loss(logits(40, 2), labels(40))
loss(logits(1, 2), torch.tensor([1]))
loss(logits(6, 2), torch.zeros(6, dtype=torch.long))  # only non-causal pairs
loss(logits(6, 2), torch.ones(6, dtype=torch.long))  # only causal pairs

# the constructor's defaults: alpha 0.25, gamma 2, three classes
focal_loss()(logits(15, 3), labels(15, classes=3))

# per-class weights as a list
focal_loss(alpha=[0.2, 0.3, 0.5], gamma=1, num_classes=3)(logits(18, 3), labels(18, classes=3))
focal_loss(alpha=[1.0, 2.0], gamma=2, num_classes=2)(logits(10, 2), labels(10))
focal_loss(alpha=[0.1, 0.2, 0.3, 0.15, 0.25], gamma=3, num_classes=5)(logits(25, 5), labels(25, classes=5))

# gamma: 0 (weighted cross-entropy), fractional, large
focal_loss(alpha=0.75, gamma=0, num_classes=2)(logits(16, 2), labels(16))
focal_loss(alpha=0.6, gamma=0.5, num_classes=2)(logits(16, 2), labels(16))
focal_loss(alpha=0.3, gamma=5, num_classes=4)(logits(16, 4), labels(16, classes=4))

# sum instead of mean
focal_loss(alpha=0.75, gamma=2, num_classes=2, size_average=False)(logits(20, 2), labels(20))
focal_loss(alpha=[0.5, 0.25, 0.25], gamma=1, num_classes=3, size_average=False)(logits(9, 3), labels(9, classes=3))

# 3-D logits (batch, pairs, classes) with 2-D labels: forward flattens the leading dimensions
focal_loss(alpha=0.75, gamma=2, num_classes=2)(logits(3, 7, 2), labels(3, 7))
focal_loss(alpha=[0.2, 0.3, 0.5], gamma=2, num_classes=3, size_average=False)(logits(2, 5, 3), labels(2, 5, classes=3))

# confident logits, right and wrong: large gaps between the classes
focal_loss(alpha=0.75, gamma=2, num_classes=2)(logits(10, 2, scale=25.0), labels(10))
