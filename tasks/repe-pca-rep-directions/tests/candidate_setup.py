"""The candidate's set-up for repe-pca-rep-directions: CPU torch, and repe/rep_readers.py on its own.

It runs in the candidate process (tests.candidate.setup) before the code under test is
imported, and before the fixture generator when `lmr record` regenerates the fixtures; the
tests' own process never imports the workspace.

1. The helpers beside the target in repe/rep_readers.py (`recenter`, and
   `project_onto_direction` for numpy input) call `Tensor.cuda()` unconditionally, which
   raises on a machine without CUDA. On such a machine this file makes `Tensor.cuda()`
   return the tensor itself, so the upstream's code runs as it would on one GPU, with
   the tensors left on the CPU. Where CUDA exists nothing is changed.
2. The tests' probes import the module as `rep_readers`, with repe/ on sys.path: importing it as
   `repe.rep_readers` would run repe/__init__.py, which imports the transformers
   pipelines (RepReadingPipeline, RepControlPipeline). Neither the target nor the other
   readers in the file use transformers.
"""
import os
import sys

import torch

if not torch.cuda.is_available():
    def _stay_on_cpu(self, device=None, non_blocking=False, **kwargs):
        return self

    torch.Tensor.cuda = _stay_on_cpu

_REPE = os.path.join(os.getcwd(), "repe")
if _REPE not in sys.path:
    sys.path.insert(0, _REPE)
