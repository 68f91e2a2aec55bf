"""Tests for run_exp1 (main_vit.py): Experiment 1, the output features of one ViT layer.

run_exp1 runs the image assets/bird.png through the model and returns the absolute values of
the features that layer `args.layer_id` (counted from 1) outputs, for every token and
channel, then draws them with lib.plot_3d_feat_vit. The model is a tiny random DINOv2-reg ViT
(tests/tiny_vit.py), on CPU: `.cuda()` is made a no-op where the code runs. The expected
features come from an independent forward hook on a copy of the model; the picture itself
is not checked.

Where the code runs: main_vit (and lib) are imported only in the candidate process
(lmr_bridge). The probes below build the tiny ViT there, call run_exp1 (with
lib.plot_3d_feat_vit replaced by a recorder, except in the last test) and send back the
features, the recorded plot call and the bytes of assets/bird.png. This process builds
the same tiny ViT itself (timm, seeded; no workspace code), checks the image's bytes
against the upstream file's SHA-256, and computes every expected value from them.
"""
import functools
import hashlib
import inspect
import io

import pytest
import torch
from lmr_bridge import probe, probe_helper
from PIL import Image

from tiny_vit import DEPTH, load_tiny_vit, vit_args

# assets/bird.png of locuslab/massive-activations at the task's commit (333,978 bytes)
BIRD_SHA256 = "0ea3758ce70d108dbc93f37e78bede619dc086740f709a1d180acc37dfdd2d17"


def plot_3d_feat_vit(feat, layer_id, model_name, model_size, savedir):
    """lib.plot_3d_feat_vit's signature (lib/plot_utils_vit.py upstream), to bind the recorded
    call to: the call may pass its arguments by position or by name."""


@probe_helper
def exp1(vit, layer_id, savedir, model_family, model_size, spy):
    """In the candidate: run_exp1 on the tiny ViT `vit` (model, layers, val_transform), on CPU
    (`.cuda()` a no-op), from the repository root, with lib.plot_3d_feat_vit replaced by a
    recorder when `spy`. (features, the recorded plot calls as [args, kwargs])."""
    import os

    import lib
    import main_vit
    import torch
    from main_vit import run_exp1

    model, layers, val_transform = vit
    calls = []
    cuda, plot, cwd = torch.Tensor.cuda, lib.plot_3d_feat_vit, os.getcwd()
    torch.Tensor.cuda = lambda self, *args, **kwargs: self
    if spy:
        lib.plot_3d_feat_vit = lambda *args, **kwargs: calls.append([list(args), dict(kwargs)])
    os.chdir(os.path.dirname(os.path.abspath(main_vit.__file__)))
    try:
        feat = run_exp1(vit_args(layer_id, savedir, model_family=model_family, model_size=model_size), layers, val_transform, model)
    finally:
        torch.Tensor.cuda, lib.plot_3d_feat_vit = cuda, plot
        os.chdir(cwd)
    return feat, calls


@probe
def features(layer_id, model_family="dinov2_reg", model_size="small"):
    """In the candidate: the features run_exp1 returns on a fresh tiny ViT, and its plot
    calls (recorded, not drawn), with the folder given as savedir."""
    import tempfile

    savedir = tempfile.mkdtemp()
    feat, calls = exp1(load_tiny_vit(), layer_id, savedir, model_family, model_size, True)
    return {"feat": feat, "calls": calls, "savedir": savedir}


@probe
def model_outputs_around(layer_id, image):
    """In the candidate: a fresh tiny ViT's output for `image` before and after run_exp1 on it."""
    import tempfile

    import torch

    vit = load_tiny_vit()
    with torch.no_grad():
        before = vit[0](image)
    exp1(vit, layer_id, tempfile.mkdtemp(), "dinov2_reg", "small", True)
    with torch.no_grad():
        after = vit[0](image)
    return {"before": before, "after": after}


@probe
def figure_written(layer_id):
    """In the candidate: run_exp1 with the real plot into a fresh folder; the first bytes of
    each file the folder holds then."""
    import os
    import tempfile

    savedir = tempfile.mkdtemp()
    exp1(load_tiny_vit(), layer_id, savedir, "dinov2_reg", "small", False)
    out = {}
    for name in sorted(os.listdir(savedir)):
        path = os.path.join(savedir, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                out[name] = f.read(8)
    return out


@probe
def bird_bytes():
    """In the candidate: the bytes of assets/bird.png (checked here against the upstream file's hash)."""
    import os

    import main_vit

    with open(os.path.join(os.path.dirname(os.path.abspath(main_vit.__file__)), "assets", "bird.png"), "rb") as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def bird_png():
    data = bird_bytes()
    assert hashlib.sha256(data).hexdigest() == BIRD_SHA256, "assets/bird.png is not the upstream image"
    return data


def hooked_output(model, block_index, image):
    """The output of model.blocks[block_index] for `image`, by a forward hook (an independent path)."""
    seen = {}
    handle = model.blocks[block_index].register_forward_hook(lambda module, inputs, output: seen.setdefault("out", output.detach()))
    with torch.no_grad():
        model(image)
    handle.remove()
    return seen["out"]


def bird(val_transform):
    return val_transform(Image.open(io.BytesIO(bird_png()))).unsqueeze(0)


def expected_features(layer_id):
    model, _, val_transform = load_tiny_vit()
    return hooked_output(model, layer_id - 1, bird(val_transform)).abs().double()


@pytest.mark.parametrize("layer_id", list(range(1, DEPTH + 1)))
def test_returns_absolute_output_of_layer_counted_from_one(layer_id):
    feat = features(layer_id)["feat"]
    want = expected_features(layer_id)
    assert isinstance(feat, torch.Tensor)
    assert feat.shape == want.shape == (1, 21, 32)  # class token, 4 registers, 16 patches
    assert torch.allclose(feat.double(), want, rtol=1e-6, atol=1e-7)


def test_features_are_detached_float64_on_cpu():
    feat = features(2)["feat"]
    assert feat.dtype == torch.float64
    assert feat.device.type == "cpu"
    assert not feat.requires_grad


def test_features_are_nonnegative_and_not_all_zero():
    feat = features(3)["feat"]
    assert bool((feat >= 0).all()) and float(feat.max()) > 0


def test_the_image_is_the_bird():
    feat = features(1)["feat"]
    _, _, val_transform = load_tiny_vit()
    other = torch.zeros_like(bird(val_transform))
    ref_model, _, _ = load_tiny_vit()
    assert not torch.allclose(feat.double(), hooked_output(ref_model, 0, other).abs().double(), rtol=1e-3, atol=1e-4)


def test_model_predictions_are_unchanged():
    model, _, val_transform = load_tiny_vit()
    image = bird(val_transform)
    got = model_outputs_around(2, image)
    with torch.no_grad():
        want = model(image)
    assert torch.allclose(got["before"], want, rtol=1e-6, atol=1e-7)
    assert torch.allclose(got["before"], got["after"], rtol=1e-6, atol=1e-7)


def test_plots_the_features_of_that_layer():
    got = features(3, model_family="dinov2_reg", model_size="small")
    assert len(got["calls"]) == 1
    args, kwargs = got["calls"][0]
    bound = inspect.signature(plot_3d_feat_vit).bind(*args, **kwargs)  # a TypeError if the call does not fit
    call = bound.arguments
    assert (call["layer_id"], call["model_name"], call["model_size"], call["savedir"]) == (2, "dinov2_reg", "small", got["savedir"])
    assert torch.allclose(call["feat"].double(), got["feat"].double())
    assert torch.allclose(call["feat"].double(), expected_features(3))


def test_writes_the_figure_into_savedir():
    files = figure_written(4)
    assert "dinov2_reg_small_layer_4.png" in files
    assert files["dinov2_reg_small_layer_4.png"] == b"\x89PNG\r\n\x1a\n"
