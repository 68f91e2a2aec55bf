"""Property tests for SimCLR.info_nce_loss (simclr.py), written from the paper's definition.

The method returns (logits, labels) for a cross-entropy: for each of the 2B rows of a
view-major batch (rows i and i + B are the two views of image i), column 0 holds the
positive pair's cosine similarity over the temperature, the other columns the negatives
(every other row but the row itself), in increasing row order, and every label is 0. The
oracle below computes the NT-Xent loss of SimCLR (Section 2.1, Eq. 1, averaged over all
2B anchors as in Algorithm 1) with plain Python loops in float64.

The method runs in the candidate process (lmr_bridge): the probes below build the SimCLR
object there (without its constructor, `args` alone) and send back what it returned (or
the gradient of the cross-entropy of its outputs, or the features after the call) as plain
data. Every expected value is computed here.
"""
import math
import random

import torch
import torch.nn.functional as F
from lmr_bridge import probe, probe_helper


@probe_helper
def make_simclr(batch_size, temperature, n_views=2, device="cpu"):
    import types

    import torch
    from simclr import SimCLR

    model = object.__new__(SimCLR)
    model.args = types.SimpleNamespace(
        batch_size=batch_size, n_views=n_views, temperature=temperature, device=torch.device(device),
        fp16_precision=False, log_every_n_steps=100, epochs=1, arch="resnet18",
    )
    return model


@probe
def info_nce_loss(batch_size, temperature, features):
    """In the candidate: (logits, labels) as the method returns them."""
    return make_simclr(batch_size, temperature).info_nce_loss(features)


@probe
def info_nce_losses(cases):
    """info_nce_loss for several (batch_size, temperature, features) at once (one round trip)."""
    return [make_simclr(b, t).info_nce_loss(f) for b, t, f in cases]


@probe
def loss_gradient(batch_size, temperature, features):
    """In the candidate: the gradient, with respect to the features, of the cross-entropy
    SimCLR.train applies to the outputs."""
    import torch.nn.functional as F

    features.requires_grad_(True)
    logits, labels = make_simclr(batch_size, temperature).info_nce_loss(features)
    F.cross_entropy(logits, labels).backward()
    return features.grad


@probe
def features_after_the_call(batch_size, temperature, features):
    make_simclr(batch_size, temperature).info_nce_loss(features)
    return features


@probe_helper
def simulated_device(name):
    """In the candidate, on a machine without that device: a stand-in for torch.device(name).

    Tensors "on" it are CPU tensors of a Tensor subclass that report device `name`; every
    operation on them gives such tensors again; a factory call or .to() naming the device
    (or one of their tensors) makes one, .cpu() or .to("cpu") a plain CPU tensor again; and,
    as on a real accelerator, a CPU tensor cannot be indexed with one of their tensors.
    Returns (mode, place, is_on, plain): `with mode:` runs code under the stand-in,
    place(t) puts a CPU tensor on it, is_on(t) says whether t is on it, plain(t) is t as a
    plain tensor with the same values.
    """
    import torch
    from torch.overrides import TorchFunctionMode

    device = torch.device(name)

    def on(value):
        return isinstance(value, torch.Tensor) and type(value) is OnDevice

    def wrap(out, to_device):
        with torch._C.DisableTorchFunction():
            if isinstance(out, torch.Tensor):
                if to_device:
                    return out if type(out) is OnDevice else out.as_subclass(OnDevice)
                return out.as_subclass(torch.Tensor) if type(out) is not torch.Tensor else out
            if isinstance(out, (tuple, list)):
                return type(out)(wrap(o, to_device) for o in out)
            return out

    def names_device(d):
        """True: the stand-in; False: another device (the CPU); None: no device named."""
        if isinstance(d, torch.Tensor):
            return on(d)
        if isinstance(d, (str, torch.device)):
            return torch.device(d).type == device.type
        return None

    # (the two classes are made with type(): a class statement here would read the test
    # module's __name__, which a probe may not take from the test files)
    def device_aware(cls, func, types, args=(), kwargs=None):
        if func == torch.Tensor.device.__get__:
            return device
        if func == torch.Tensor.is_cuda.__get__:
            return device.type == "cuda"
        return torch.Tensor.__torch_function__.__func__(cls, func, types, args, kwargs or {})

    OnDevice = type("OnDevice", (torch.Tensor,), {"__torch_function__": classmethod(device_aware)})

    def simulate(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is torch.Tensor.to:
            target = args[1] if len(args) > 1 and isinstance(args[1], torch.Tensor) else None
            parsed_device, dtype, _, _ = torch._C._nn._parse_to(*args[1:], **kwargs)
            moving = names_device(target if target is not None else parsed_device)
            out = func(args[0], dtype) if dtype is not None else args[0]
            return out if moving is None else wrap(out, moving)
        if func is torch.Tensor.cuda:
            return wrap(args[0], device.type == "cuda")
        if func is torch.Tensor.cpu:
            return wrap(args[0], False)
        if func in (torch.Tensor.__getitem__, torch.Tensor.__setitem__) and not on(args[0]):
            index = args[1] if isinstance(args[1], tuple) else (args[1],)
            if any(on(i) for i in index):
                raise RuntimeError("indices should be either on cpu or on the same device as the indexed tensor (cpu)")
        if "device" in kwargs:
            moving = names_device(kwargs["device"])
            if moving is not None:
                kwargs["device"] = torch.device("cpu")
                return wrap(func(*args, **kwargs), moving)
        return func(*args, **kwargs)

    Mode = type("Mode", (TorchFunctionMode,), {"__torch_function__": simulate})

    return Mode(), (lambda t: wrap(t, True)), on, (lambda t: wrap(t, False))


@probe
def on_an_accelerator(batch_size, temperature, features, name):
    """In the candidate: args.device is torch.device(`name`) (run.py's choice when a GPU is
    there), and the features are on that device, as SimCLR.train passes them; the device
    is simulated (simulated_device), so this runs on a CPU-only machine."""
    mode, place, is_on, plain = simulated_device(name)
    model = make_simclr(batch_size, temperature, device=name)
    with mode:
        logits, labels = model.info_nce_loss(place(features))
        return {
            "logits_on_device": is_on(logits),
            "labels_on_device": is_on(labels),
            "logits": plain(logits).detach(),
            "labels": plain(labels),
        }


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


def expected_logits(rows, batch_size, temperature):
    """The layout the instruction states: the positive, then the negatives in row order."""
    n = 2 * batch_size
    out = []
    for i in range(n):
        j = partner(i, batch_size)
        out.append([cosine(rows[i], rows[k]) / temperature for k in [j] + [k for k in range(n) if k not in (i, j)]])
    return out


def close(a, b, rel=1e-5, abs_=5e-5):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def test_cross_entropy_of_the_outputs_is_the_nt_xent_loss():
    settings = [(2, 8, 0.5, 1), (5, 16, 0.07, 2), (12, 128, 0.1, 3), (7, 3, 1.0, 4)]
    batches = [random_batch(batch_size, dim, seed) for batch_size, dim, _, seed in settings]
    results = info_nce_losses([[b, t, f] for (b, _, t, _), f in zip(settings, batches)])
    for (batch_size, dim, temperature, _), features, (logits, labels) in zip(settings, batches, results):
        loss = F.cross_entropy(logits.double(), labels).item()
        expected = nt_xent(features.double().tolist(), batch_size, temperature)
        assert close(loss, expected, rel=1e-5, abs_=1e-5), (batch_size, dim, temperature, loss, expected)


def test_shapes_and_dtypes():
    batch_size = 6
    logits, labels = info_nce_loss(batch_size, 0.07, random_batch(batch_size, 32, 5))
    assert tuple(logits.shape) == (2 * batch_size, 2 * batch_size - 1)
    assert logits.dtype == torch.float32
    assert tuple(labels.shape) == (2 * batch_size,)
    assert labels.dtype == torch.int64


def test_every_label_is_zero():
    batch_size = 9
    _, labels = info_nce_loss(batch_size, 0.2, random_batch(batch_size, 16, 6))
    assert labels.tolist() == [0] * (2 * batch_size)


def test_first_column_is_the_positive_pair():
    batch_size, temperature = 7, 0.1
    features = random_batch(batch_size, 12, 7)
    rows = features.double().tolist()
    logits, _ = info_nce_loss(batch_size, temperature, features)
    for i in range(2 * batch_size):
        expected = cosine(rows[i], rows[partner(i, batch_size)]) / temperature
        assert close(logits[i, 0].item(), expected), (i, logits[i, 0].item(), expected)


def test_other_columns_are_the_negatives_in_row_order():
    batch_size, temperature = 5, 0.5
    features = random_batch(batch_size, 10, 8)
    rows = features.double().tolist()
    logits, _ = info_nce_loss(batch_size, temperature, features)
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
    (logits, _), (scaled, _) = info_nce_losses([[batch_size, 0.07, features], [batch_size, 0.07, features * scales]])
    for a, b in zip(logits.flatten().tolist(), scaled.flatten().tolist()):
        assert close(a, b), (a, b)


def test_logits_are_similarities_divided_by_the_temperature():
    batch_size = 4
    features = random_batch(batch_size, 16, 10)
    (cold, _), (warm, _) = info_nce_losses([[batch_size, 0.05, features], [batch_size, 2.0, features]])
    for a, b in zip(cold.flatten().tolist(), warm.flatten().tolist()):
        assert close(a * 0.05, b * 2.0, rel=1e-5, abs_=1e-6), (a, b)
        assert -1.0 - 1e-5 <= b * 2.0 <= 1.0 + 1e-5


def test_identical_views_give_one_over_the_temperature_as_positive():
    batch_size, temperature = 5, 0.2
    g = torch.Generator().manual_seed(11)
    images = torch.randn(batch_size, 8, generator=g)
    logits, _ = info_nce_loss(batch_size, temperature, torch.cat([images, images.clone()], dim=0))
    for i in range(2 * batch_size):
        assert close(logits[i, 0].item(), 1.0 / temperature), (i, logits[i, 0].item())
        assert logits[i, 1:].max().item() < 1.0 / temperature


def test_batch_of_one_image_has_only_the_positive():
    features = random_batch(1, 8, 12)
    logits, labels = info_nce_loss(1, 0.07, features)
    assert tuple(logits.shape) == (2, 1)
    assert labels.tolist() == [0, 0]
    assert F.cross_entropy(logits, labels).item() == 0.0


def test_gradient_of_the_loss_matches_nt_xent():
    batch_size, temperature = 4, 0.3
    base = random_batch(batch_size, 6, 13).double()

    grad = loss_gradient(batch_size, temperature, base.clone())

    reference = base.clone().requires_grad_(True)
    z = reference / reference.norm(dim=1, keepdim=True)
    n = 2 * batch_size
    losses = []
    for i in range(n):
        scores = torch.stack([z[i] @ z[k] / temperature for k in range(n) if k != i])
        positive = z[i] @ z[partner(i, batch_size)] / temperature
        losses.append(torch.logsumexp(scores, dim=0) - positive)
    torch.stack(losses).mean().backward()

    assert isinstance(grad, torch.Tensor), grad
    assert tuple(grad.shape) == tuple(reference.grad.shape), tuple(grad.shape)
    for a, b in zip(grad.flatten().tolist(), reference.grad.flatten().tolist()):
        assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9), (a, b)


def test_features_are_left_unchanged():
    batch_size = 5
    features = random_batch(batch_size, 16, 14)
    after = features_after_the_call(batch_size, 0.07, features.clone())
    assert torch.equal(after, features)


def test_labels_follow_the_logits_onto_args_device():
    # On a GPU run, run.py sets args.device = torch.device("cuda") and SimCLR.train moves the
    # images (so the features and the logits) there; labels left on the CPU would make the
    # caller's CrossEntropyLoss fail. The device is simulated in the candidate, so this runs
    # on a CPU-only machine; the values are checked as well.
    batch_size, temperature = 4, 0.5
    features = random_batch(batch_size, 8, 15)
    got = on_an_accelerator(batch_size, temperature, features, "cuda")
    assert got["logits_on_device"], "the logits are not on the features' device"
    assert got["labels_on_device"], "the labels are not on args.device (where the logits are)"
    assert got["labels"].tolist() == [0] * (2 * batch_size)
    assert got["labels"].dtype == torch.int64
    expected = expected_logits(features.double().tolist(), batch_size, temperature)
    assert tuple(got["logits"].shape) == (2 * batch_size, 2 * batch_size - 1)
    for i, (erow, grow) in enumerate(zip(expected, got["logits"].tolist())):
        for j, (e, g) in enumerate(zip(erow, grow)):
            assert close(g, e), (i, j, g, e)
