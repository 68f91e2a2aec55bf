"""Property tests for SimCLR.info_nce_loss (simclr.py), written from the paper's definition.

The method returns (logits, labels) for a cross-entropy: for each of the 2B rows of a
view-major batch (rows i and i + B are the two views of image i), column 0 holds the
positive pair's cosine similarity over the temperature, the other columns the negatives
(every other row but the row itself), in increasing row order, and every label is 0. The
oracle below computes the NT-Xent loss of SimCLR (Section 2.1, Eq. 1, averaged over all
2B anchors as in Algorithm 1) with plain Python loops in float64.
"""
import math
import random
import types

import torch
import torch.nn.functional as F

from simclr import SimCLR

_isclose = math.isclose


def make_simclr(batch_size, temperature, n_views=2):
    model = object.__new__(SimCLR)
    model.args = types.SimpleNamespace(
        batch_size=batch_size, n_views=n_views, temperature=temperature, device=torch.device("cpu"),
        fp16_precision=False, log_every_n_steps=100, epochs=1, arch="resnet18",
    )
    return model


def random_batch(batch_size, dim, seed, noise=0.4):
    """A view-major batch: second view = first view + noise, as a partly trained encoder gives."""
    g = torch.Generator().manual_seed(seed)
    first = torch.randn(batch_size, dim, generator=g)
    second = first + noise * torch.randn(batch_size, dim, generator=g)
    return torch.cat([first, second], dim=0)


def cosine(u, v):
    dot = sum(a * b for a, b in zip(u, v))
    return dot / (math.sqrt(sum(a * a for a in u)) * math.sqrt(sum(b * b for b in v)))


def partner(i, batch_size):
    return (i + batch_size) % (2 * batch_size)


def nt_xent(rows, batch_size, temperature):
    """Mean over the 2B anchors of -log(exp(s(i, j)/t) / sum over k != i of exp(s(i, k)/t))."""
    n = 2 * batch_size
    total = 0.0
    for i in range(n):
        scores = [cosine(rows[i], rows[k]) / temperature for k in range(n) if k != i]
        top = max(scores)
        log_denominator = top + math.log(sum(math.exp(s - top) for s in scores))
        total += log_denominator - cosine(rows[i], rows[partner(i, batch_size)]) / temperature
    return total / n


def close(a, b, rel=1e-5, abs_=5e-5):
    return _isclose(a, b, rel_tol=rel, abs_tol=abs_)


def test_cross_entropy_of_the_outputs_is_the_nt_xent_loss():
    for batch_size, dim, temperature, seed in [(2, 8, 0.5, 1), (5, 16, 0.07, 2), (12, 128, 0.1, 3), (7, 3, 1.0, 4)]:
        features = random_batch(batch_size, dim, seed)
        logits, labels = make_simclr(batch_size, temperature).info_nce_loss(features)
        loss = F.cross_entropy(logits.double(), labels).item()
        expected = nt_xent(features.double().tolist(), batch_size, temperature)
        assert close(loss, expected, rel=1e-5, abs_=1e-5), (batch_size, dim, temperature, loss, expected)


def test_shapes_and_dtypes():
    batch_size = 6
    logits, labels = make_simclr(batch_size, 0.07).info_nce_loss(random_batch(batch_size, 32, 5))
    assert tuple(logits.shape) == (2 * batch_size, 2 * batch_size - 1)
    assert logits.dtype == torch.float32
    assert tuple(labels.shape) == (2 * batch_size,)
    assert labels.dtype == torch.int64


def test_every_label_is_zero():
    batch_size = 9
    _, labels = make_simclr(batch_size, 0.2).info_nce_loss(random_batch(batch_size, 16, 6))
    assert labels.tolist() == [0] * (2 * batch_size)


def test_first_column_is_the_positive_pair():
    batch_size, temperature = 7, 0.1
    features = random_batch(batch_size, 12, 7)
    rows = features.double().tolist()
    logits, _ = make_simclr(batch_size, temperature).info_nce_loss(features)
    for i in range(2 * batch_size):
        expected = cosine(rows[i], rows[partner(i, batch_size)]) / temperature
        assert close(logits[i, 0].item(), expected), (i, logits[i, 0].item(), expected)


def test_other_columns_are_the_negatives_in_row_order():
    batch_size, temperature = 5, 0.5
    features = random_batch(batch_size, 10, 8)
    rows = features.double().tolist()
    logits, _ = make_simclr(batch_size, temperature).info_nce_loss(features)
    for i in range(2 * batch_size):
        negatives = [k for k in range(2 * batch_size) if k not in (i, partner(i, batch_size))]
        got = logits[i, 1:].tolist()
        assert len(got) == len(negatives)
        for column, k in enumerate(negatives, start=1):
            expected = cosine(rows[i], rows[k]) / temperature
            assert close(got[column - 1], expected), (i, column, k, got[column - 1], expected)


def test_rescaling_feature_rows_changes_nothing():
    batch_size = 6
    features = random_batch(batch_size, 20, 9)
    rng = random.Random(9)
    scales = torch.tensor([[rng.choice([0.01, 0.5, 3.0, 40.0, 250.0])] for _ in range(2 * batch_size)])
    model = make_simclr(batch_size, 0.07)
    logits, _ = model.info_nce_loss(features)
    scaled, _ = model.info_nce_loss(features * scales)
    for a, b in zip(logits.flatten().tolist(), scaled.flatten().tolist()):
        assert close(a, b), (a, b)


def test_logits_are_similarities_divided_by_the_temperature():
    batch_size = 4
    features = random_batch(batch_size, 16, 10)
    cold, _ = make_simclr(batch_size, 0.05).info_nce_loss(features)
    warm, _ = make_simclr(batch_size, 2.0).info_nce_loss(features)
    for a, b in zip(cold.flatten().tolist(), warm.flatten().tolist()):
        assert close(a * 0.05, b * 2.0, rel=1e-5, abs_=1e-6), (a, b)
        assert -1.0 - 1e-5 <= b * 2.0 <= 1.0 + 1e-5


def test_identical_views_give_one_over_the_temperature_as_positive():
    batch_size, temperature = 5, 0.2
    g = torch.Generator().manual_seed(11)
    images = torch.randn(batch_size, 8, generator=g)
    logits, _ = make_simclr(batch_size, temperature).info_nce_loss(torch.cat([images, images.clone()], dim=0))
    for i in range(2 * batch_size):
        assert close(logits[i, 0].item(), 1.0 / temperature), (i, logits[i, 0].item())
        assert logits[i, 1:].max().item() < 1.0 / temperature


def test_batch_of_one_image_has_only_the_positive():
    features = random_batch(1, 8, 12)
    logits, labels = make_simclr(1, 0.07).info_nce_loss(features)
    assert tuple(logits.shape) == (2, 1)
    assert labels.tolist() == [0, 0]
    assert F.cross_entropy(logits, labels).item() == 0.0


def test_gradient_of_the_loss_matches_nt_xent():
    batch_size, temperature = 4, 0.3
    base = random_batch(batch_size, 6, 13).double()

    features = base.clone().requires_grad_(True)
    logits, labels = make_simclr(batch_size, temperature).info_nce_loss(features)
    F.cross_entropy(logits, labels).backward()

    reference = base.clone().requires_grad_(True)
    z = reference / reference.norm(dim=1, keepdim=True)
    n = 2 * batch_size
    losses = []
    for i in range(n):
        scores = torch.stack([z[i] @ z[k] / temperature for k in range(n) if k != i])
        positive = z[i] @ z[partner(i, batch_size)] / temperature
        losses.append(torch.logsumexp(scores, dim=0) - positive)
    torch.stack(losses).mean().backward()

    assert features.grad is not None
    for a, b in zip(features.grad.flatten().tolist(), reference.grad.flatten().tolist()):
        assert _isclose(a, b, rel_tol=1e-6, abs_tol=1e-9), (a, b)


def test_features_are_left_unchanged():
    batch_size = 5
    features = random_batch(batch_size, 16, 14)
    before = features.clone()
    make_simclr(batch_size, 0.07).info_nce_loss(features)
    assert torch.equal(features, before)
