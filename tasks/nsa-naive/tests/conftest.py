"""The tests' own set-up (ours, not upstream code; it runs only in the tests' process).

The property tests compute their expected values here with many tiny float64 tensor
operations (tests/test_properties.py's oracle): one intra-op thread, as in the candidate
(tests/candidate_setup.py), keeps them fast on a shared machine.
"""
import torch

torch.set_num_threads(1)
