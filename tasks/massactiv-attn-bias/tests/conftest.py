"""The tests' own set-up (ours, not upstream code; it runs only in the tests' process).

The oracle's float64 attention and GPT are tiny: one torch thread is faster than a pool on
the shared cores and gives the same numbers every run.
"""
import torch

torch.set_num_threads(1)
