# Alternative 'forward-hook' for massactiv-run-exp1: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: main_vit.py::run_exp1
    block_idx = args.layer_id - 1  # --layer_id 1 is the first block
    block = layers[block_idx]

    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join("assets", "bird.png"), os.path.join(here, "assets", "bird.png")]
    img_path = next((p for p in candidates if os.path.exists(p)), candidates[0])
    with Image.open(img_path) as pil_img:
        images = val_transform(pil_img)[None, ...]

    param = next(iter(model.parameters()), None)
    if param is not None:
        images = images.to(param.device)

    # Capture the output hidden states of the chosen block with a forward hook.
    captured = []

    def _keep_output(module, inputs, output):
        captured.append(output.detach().to("cpu", dtype=torch.float64))

    handle = block.register_forward_hook(_keep_output)
    try:
        with torch.no_grad():
            model(images)
    finally:
        handle.remove()

    feat = captured[-1]
    feat_abs = torch.abs(feat)

    lib.plot_3d_feat_vit(feat_abs, block_idx, args.model_family, args.model_size, args.savedir)
    return feat_abs
