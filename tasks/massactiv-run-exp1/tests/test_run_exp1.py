"""Tests for run_exp1 (main_vit.py): Experiment 1, the output features of one ViT layer.

run_exp1 runs the image assets/bird.png through the model and returns the absolute values of
the features that layer `args.layer_id` (counted from 1) outputs, for every token and
channel, then draws them with lib.plot_3d_feat_vit. The model is a tiny random DINOv2-reg ViT
(tests/tiny_vit.py), on CPU: `.cuda()` is made a no-op here. The expected features come from
an independent forward hook on a copy of the model; the picture itself is not checked.
"""
import copy
from pathlib import Path

import pytest
import torch
from PIL import Image

import lib
import main_vit
from main_vit import run_exp1
from tiny_vit import DEPTH, load_tiny_vit, vit_args

ROOT = Path(main_vit.__file__).resolve().parent
_allclose = torch.allclose


@pytest.fixture(autouse=True)
def on_cpu_in_repo_root(monkeypatch):
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, *args, **kwargs: self)
    monkeypatch.chdir(ROOT)


@pytest.fixture
def plot_calls(monkeypatch):
    calls = []
    monkeypatch.setattr(lib, "plot_3d_feat_vit", lambda *args, **kwargs: calls.append((args, kwargs)))
    return calls


def hooked_output(model, block_index, image):
    """The output of model.blocks[block_index] for `image`, by a forward hook (an independent path)."""
    seen = {}
    handle = model.blocks[block_index].register_forward_hook(lambda module, inputs, output: seen.setdefault("out", output.detach()))
    with torch.no_grad():
        model(image)
    handle.remove()
    return seen["out"]


def bird(val_transform):
    return val_transform(Image.open(ROOT / "assets" / "bird.png")).unsqueeze(0)


def expected_features(layer_id):
    model, _, val_transform = load_tiny_vit()
    return hooked_output(model, layer_id - 1, bird(val_transform)).abs().double()


@pytest.mark.parametrize("layer_id", list(range(1, DEPTH + 1)))
def test_returns_absolute_output_of_layer_counted_from_one(layer_id, tmp_path, plot_calls):
    model, layers, val_transform = load_tiny_vit()
    feat = run_exp1(vit_args(layer_id, tmp_path), layers, val_transform, model)
    want = expected_features(layer_id)
    assert isinstance(feat, torch.Tensor)
    assert feat.shape == want.shape == (1, 21, 32)  # class token, 4 registers, 16 patches
    assert _allclose(feat.double(), want, rtol=1e-6, atol=1e-7)


def test_features_are_detached_float64_on_cpu(tmp_path, plot_calls):
    model, layers, val_transform = load_tiny_vit()
    feat = run_exp1(vit_args(2, tmp_path), layers, val_transform, model)
    assert feat.dtype == torch.float64
    assert feat.device.type == "cpu"
    assert not feat.requires_grad


def test_features_are_nonnegative_and_not_all_zero(tmp_path, plot_calls):
    model, layers, val_transform = load_tiny_vit()
    feat = run_exp1(vit_args(3, tmp_path), layers, val_transform, model)
    assert bool((feat >= 0).all()) and float(feat.max()) > 0


def test_the_image_is_the_bird(tmp_path, plot_calls):
    model, layers, val_transform = load_tiny_vit()
    feat = run_exp1(vit_args(1, tmp_path), layers, val_transform, model)
    other = torch.zeros_like(bird(val_transform))
    ref_model, _, _ = load_tiny_vit()
    assert not _allclose(feat.double(), hooked_output(ref_model, 0, other).abs().double(), rtol=1e-3, atol=1e-4)


def test_model_predictions_are_unchanged(tmp_path, plot_calls):
    model, layers, val_transform = load_tiny_vit()
    image = bird(val_transform)
    with torch.no_grad():
        before = model(image)
    run_exp1(vit_args(2, tmp_path), layers, val_transform, model)
    with torch.no_grad():
        after = model(image)
    assert _allclose(before, after, rtol=1e-6, atol=1e-7)


def test_plots_the_features_of_that_layer(tmp_path, plot_calls):
    model, layers, val_transform = load_tiny_vit()
    args = vit_args(3, tmp_path, model_family="dinov2_reg", model_size="small")
    feat = run_exp1(args, layers, val_transform, model)
    assert len(plot_calls) == 1
    (plotted, layer_index, family, size, savedir), kwargs = plot_calls[0]
    assert kwargs == {}
    assert (layer_index, family, size, savedir) == (2, "dinov2_reg", "small", str(tmp_path))
    assert _allclose(plotted.double(), feat.double())


def test_writes_the_figure_into_savedir(tmp_path):
    model, layers, val_transform = load_tiny_vit()
    run_exp1(vit_args(4, tmp_path), layers, val_transform, model)
    assert (tmp_path / "dinov2_reg_small_layer_4.png").is_file()
