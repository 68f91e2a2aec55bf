"""Driver for `lmr record`: the two multiscale mixing modules of TimeMixer, called as the
paper's code calls them.

Each scenario builds the upstream's own `PastDecomposableMixing` block (which constructs one
`MultiScaleSeasonMixing` and one `MultiScaleTrendMixing` from the same configs) and runs it
on a list of multiscale series shaped as `Model.forecast` makes them: scale i has
`seq_len // down_sampling_window ** i` time steps, for i = 0 .. down_sampling_layers, and
`d_model` channels. The block decomposes each scale and hands the seasonal and the trend
parts, time last, to the two mixing modules: those forward calls are what is recorded
(and the constructors, whose `configs` argument is an argparse.Namespace lmr cannot store:
record.skip_args). A few direct calls follow, on inputs of the same shapes.

Scenarios: window 2 with 3 down-sampling layers (4 scales, the scripts' usual setting);
window 3 down to a single coarsest step; a length that the window does not divide (floors);
a single down-sampling layer (2 scales); channel mixing on with the DFT decomposition;
float64; trained-looking weights (perturbed away from their initialisation).
"""
import argparse

import torch

from models.TimeMixer import MultiScaleSeasonMixing, MultiScaleTrendMixing, PastDecomposableMixing

torch.manual_seed(20240523)


def configs(seq_len, window, layers, d_model=4, channel_independence=1, decomp_method="moving_avg"):
    return argparse.Namespace(
        seq_len=seq_len, pred_len=4, down_sampling_window=window, down_sampling_layers=layers,
        d_model=d_model, d_ff=8, dropout=0.0, channel_independence=channel_independence,
        decomp_method=decomp_method, moving_avg=5, top_k=2,
    )


def scales(cfg, batch, dtype=torch.float32):
    return [torch.randn(batch, cfg.seq_len // cfg.down_sampling_window ** i, cfg.d_model, dtype=dtype)
            for i in range(cfg.down_sampling_layers + 1)]


def run_block(cfg, batch, dtype=torch.float32, perturb=False):
    block = PastDecomposableMixing(cfg).to(dtype).eval()
    if perturb:
        with torch.no_grad():
            for p in block.parameters():
                p.add_(0.3 * torch.randn_like(p))
    block(scales(cfg, batch, dtype))


# 1. window 2, three down-sampling layers: scales of 16, 8, 4, 2 steps
run_block(configs(16, 2, 3), batch=3)
# 2. window 3 down to one step: 18, 6, 2 ... and 12, 4, 1
run_block(configs(18, 3, 2), batch=2)
run_block(configs(12, 3, 2, d_model=3), batch=2)
# 3. lengths the window does not divide: 15, 7, 3
run_block(configs(15, 2, 2), batch=2)
# 4. a single down-sampling layer: two scales
run_block(configs(8, 2, 1), batch=2)
# 5. channel mixing on, DFT decomposition
run_block(configs(16, 2, 2, d_model=6, channel_independence=0, decomp_method="dft_decomp"), batch=2)
# 6. float64
run_block(configs(12, 2, 2), batch=2, dtype=torch.float64)
# 7. weights moved away from their initialisation, as training leaves them
run_block(configs(16, 2, 3), batch=2, perturb=True)

# 8. direct calls with gradients on, outside the block (season and trend from the same scales)
cfg = configs(20, 2, 2, d_model=5)
season, trend = MultiScaleSeasonMixing(cfg), MultiScaleTrendMixing(cfg)
xs = [x.permute(0, 2, 1) for x in scales(cfg, 2)]
season(xs)
trend(xs)
