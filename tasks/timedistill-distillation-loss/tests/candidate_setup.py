"""Candidate set-up for timedistill-distillation-loss (written for lmr; no upstream code).

lmr runs this file in the candidate process (task.json tests.candidate.setup) before the
workspace is imported; the tests themselves never import the workspace.

`Exp_Long_Term_Forecast.distillation_loss` uses torch alone, but importing
`exp/exp_long_term_forecasting.py` runs the whole experiment stack at module level:
`exp.exp_basic` imports every model file (`layers/SelfAttention_Family.py` imports
`reformer_pytorch`), and `data_provider.data_factory` imports `data_provider/data_loader.py`,
which imports `sktime.datasets`. Neither is used by the target. task.json's
environment.stand_ins gives the measured reasons for not installing them.

Two stand-in modules are registered in `sys.modules` before the experiment module is
imported; each holds only the names the upstream imports from it, as classes or
functions that raise if they are ever used. Everything else (torch, numpy, pandas,
scikit-learn, scipy, sympy, matplotlib, psutil, einops) is the real package.
"""
import sys
import types


def _unavailable(name):
    def stand_in(*args, **kwargs):
        raise RuntimeError(f"{name} is an lmr grader stand-in and cannot be used")

    stand_in.__name__ = name
    return stand_in


def _install():
    sktime = types.ModuleType("sktime")
    sktime.__doc__ = "lmr grader stand-in"
    datasets = types.ModuleType("sktime.datasets")
    datasets.__doc__ = "lmr grader stand-in"
    datasets.load_from_tsfile_to_dataframe = _unavailable("load_from_tsfile_to_dataframe")
    sktime.datasets = datasets

    reformer = types.ModuleType("reformer_pytorch")
    reformer.__doc__ = "lmr grader stand-in"

    class LSHSelfAttention:
        def __init__(self, *args, **kwargs):
            raise RuntimeError("reformer_pytorch.LSHSelfAttention is an lmr grader stand-in and cannot be used")

    LSHSelfAttention.__module__ = "reformer_pytorch"
    reformer.LSHSelfAttention = LSHSelfAttention

    sys.modules["sktime"] = sktime
    sys.modules["sktime.datasets"] = datasets
    sys.modules["reformer_pytorch"] = reformer


_install()
