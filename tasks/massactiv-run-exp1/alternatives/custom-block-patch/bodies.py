# Alternative 'custom-block-patch' for massactiv-run-exp1: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: main_vit.py::run_exp1
    # layer_id is counted from 1 on the command line; index the blocks from 0.
    layer_id = args.layer_id - 1
    layer = layers[layer_id]

    img_path = os.path.join("assets", "bird.png")
    if not os.path.exists(img_path):
        img_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets", "bird.png")
    img = Image.open(img_path)
    img = val_transform(img).unsqueeze(0)
    device = next(model.parameters()).device
    img = img.to(device)  # upstream: img.cuda()

    # Swap in the repository's block forward, which stores the block output (detached, CPU, float64)
    # in layer.feat, run the model once, then put the block back exactly as it was.
    saved = {name: layer.__dict__[name] for name in ("forward", "layer_id", "feat") if name in layer.__dict__}
    mp.enable_vit_custom_block(layer, layer_id)
    try:
        with torch.no_grad():
            output = model(img)
        feat_abs = layer.feat.abs()
    finally:
        for name in ("forward", "layer_id", "feat"):
            if name in layer.__dict__:
                delattr(layer, name)
        for name, value in saved.items():
            setattr(layer, name, value)

    lib.plot_3d_feat_vit(feat_abs, layer_id, args.model_family, args.model_size, args.savedir)
    return feat_abs
