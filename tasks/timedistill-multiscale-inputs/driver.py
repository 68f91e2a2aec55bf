"""Driver for `lmr record`: calls `multi_scale_process_inputs.forward` as the distillation loop does.

In `Exp_Long_Term_Forecast.train` the module is built with its defaults (3 layers, window 2)
and called on channel-first tensors: predictions permuted to (batch, channels, pred_len)
and MLP hidden features (batch, channels, d_model). The calls below use those defaults on
such shapes (pred_len 96, 192, 336; feature widths that 8 does not divide), then other
settings of the constructor (0 to 4 layers, windows 2 to 4), float64, inputs that require
grad (the student's outputs do), a single channel and a single sample.
"""
import torch

from exp.exp_long_term_forecasting import multi_scale_process_inputs

torch.manual_seed(0)


def call(x, **kwargs):
    module = multi_scale_process_inputs(**kwargs)
    return module(x)


# defaults, as the training loop uses them: predictions (B, C, pred_len)
for b, c, t in ((2, 3, 96), (1, 7, 192), (3, 2, 336)):
    call(torch.randn(b, c, t))
# hidden features (B, C, d_model) whose width the window powers do not divide
for b, c, t in ((2, 4, 100), (2, 3, 37), (1, 5, 15), (2, 2, 8)):
    call(torch.randn(b, c, t))
# other constructor settings
for layers, window, t in ((0, 2, 12), (1, 2, 9), (2, 3, 29), (4, 2, 50), (2, 4, 35), (1, 5, 11)):
    call(torch.randn(2, 3, t), down_sampling_layers=layers, down_sampling_window=window)
# float64, and a student output that requires grad
call(torch.randn(2, 3, 48, dtype=torch.float64))
call(torch.randn(2, 3, 24, requires_grad=True))
# one channel, one sample; a non-contiguous input (a permuted prediction, as the loop passes)
call(torch.randn(1, 1, 16))
call(torch.randn(2, 40, 3).permute(0, 2, 1))
# a series with a trend and large values
call(1e4 * torch.linspace(0, 1, 64).repeat(2, 3, 1) + torch.randn(2, 3, 64))
