"""A tiny, randomly initialised DINOv2-with-registers ViT, set up the way lib.load_vit sets one up.

lib.load_vit builds timm's `vit_{size}_patch14_reg4_dinov2.lvd142m` with pretrained weights, puts
it in eval mode, takes `model.blocks` as the layers and builds the evaluation transform from the
model's data config. Here the same timm architecture (class token, 4 registers, LayerScale) is
built small and without weights (nothing is downloaded): 56-pixel images, 16 patches, 32
channels, 4 blocks; the transform is timm's evaluation transform for that input size.
"""
import argparse

import timm
import torch

DEPTH = 4
IMG = 56


def load_tiny_vit(seed=0):
    torch.manual_seed(seed)
    model = timm.create_model(
        "vit_small_patch14_reg4_dinov2", pretrained=False, img_size=IMG, embed_dim=32, depth=DEPTH, num_heads=2, num_classes=1000,
    )
    model = model.eval()
    config = timm.data.resolve_model_data_config(model)
    config["input_size"] = (3, IMG, IMG)
    val_transform = timm.data.create_transform(**config, is_training=False)
    return model, model.blocks, val_transform


def vit_args(layer_id, savedir, model_family="dinov2_reg", model_size="small"):
    """main_vit.py's argument namespace for `--exp1 --layer_id N` (its other options at their defaults)."""
    return argparse.Namespace(
        model_family=model_family, model_size=model_size, layer_id=layer_id, exp1=True, exp2=False, exp3=False,
        imagenet_dir="/home/mingjies/imagenet-data/val", linear_head_path="/data/locus/project_data/project_data2/mingjies/dinov2",
        reg_feat_mean="assets/reg_feat_mean/", seed=0, num_imgs_mean=10, savedir=str(savedir),
    )
