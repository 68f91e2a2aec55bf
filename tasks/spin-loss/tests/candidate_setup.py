"""Grader set-up for spin-loss (written for lmr; no upstream code): stand-in packages.

`spin_loss` uses torch alone, but importing `spin.alignment.trainer` runs the package's
`__init__.py`, which imports every module of `spin/alignment/` and, through them, the
Hugging Face stack at module level: transformers, trl, accelerate, datasets, peft and
huggingface_hub (configs.py, data.py, model_utils.py, trainer.py, utils.py). On the task's
base (Debian bookworm, Python 3.11, Debian's CPU torch 1.13.1) that stack cannot be
installed as SPIN pins it: peft==0.6.1 requires torch>=1.13.0, which Debian's torch
(version string 1.13.0a0+gitunknown, a pre-release) does not satisfy, so pip replaces it
with a CUDA torch 2.x from PyPI; without peft, model_utils.py fails at import, and trl
0.7.4 imports peft's submodules as soon as a `peft` is importable. task.json's
environment.stand_ins gives the measured figures.

So the grader stands in for all six packages. This file is the task's tests.candidate.setup:
the candidate process (the only one that imports the workspace) runs it before it imports
the upstream package, and `lmr record` runs it before the driver. It puts a finder at the head of `sys.meta_path` answers for these packages and every
submodule of them (`transformers.trainer_utils`, `huggingface_hub.utils._validators`, ...)
with an empty module whose attributes come into being when first read:

- `is_<something>_available` is a function that returns False: the feature probes that
  trainer.py calls at import time (peft, wandb, deepspeed) report the feature missing, and
  the optional imports they guard are skipped, as on a machine without those packages;
- a name ending in `_MAPPING` is an empty dict (configs.py lists
  `MODEL_FOR_CAUSAL_LM_MAPPING.keys()` at import time);
- any other name is a fresh class named after it, enough for `from X import Y`, base classes
  (`SPINTrainer(Trainer)`, `SPINConfig(TrainingArguments)`), decorators' arguments and
  annotations evaluated at definition time (`BitsAndBytesConfig | None`).

Nothing in them computes anything. They are installed unconditionally (a real copy already
imported is dropped), so every run sees the same modules. torch is the real Debian package.
"""
import importlib.abc
import importlib.machinery
import sys
import types

STOOD_IN = ("transformers", "trl", "accelerate", "datasets", "peft", "huggingface_hub")


def _never_available(*args, **kwargs):
    return False


class _StandInModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        if attr.startswith("is_") and attr.endswith("_available"):
            value = _never_available
        elif attr.endswith("_MAPPING"):
            value = {}
        else:
            value = type(attr, (), {"__module__": self.__name__, "__doc__": "lmr grader stand-in"})
        setattr(self, attr, value)
        return value


class _StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds, and loads, a stand-in for each stood-in package and any of its submodules."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".", 1)[0] not in STOOD_IN:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _StandInModule(spec.name, "lmr grader stand-in for %s (tests/candidate_setup.py)" % spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def _install():
    for name in list(sys.modules):
        if name.split(".", 1)[0] in STOOD_IN:
            del sys.modules[name]
    sys.meta_path.insert(0, _StandInFinder())


_install()
