"""Grader set-up for tdpo-loss (written for lmr; no upstream code): stand-in modules.

`trainers.py` pulls in the whole training stack when it is imported, while `tdpo_loss`
itself uses nothing but torch. On the task's base (Debian bookworm, Python 3.11, Debian's
CPU torch 1.13.1) that stack cannot be imported for real:

- `torch.distributed.fsdp` of Debian's torch raises ValueError while it is imported on
  Python 3.11 (a dataclass field with a mutable default), and the upstream also asks for
  `FullOptimStateDictConfig`, which torch 1.13 lacks;
- `tensor-parallel==1.2.4` drags in peft and a CUDA torch 2.x from PyPI (54 distributions
  in pip's resolution), which would replace Debian's torch.

The import therefore needs stand-ins in any case, and the other modules the loss never
reaches (transformers, omegaconf, wandb, datasets, bs4) are stood in for with them;
task.json's environment.stand_ins gives the measured cost of each. torch, numpy and tqdm
stay the real Debian packages.

Each stand-in is an empty module whose attributes are made on first access: a fresh class
named after the attribute, which is enough for `from X import Y`, for base classes and for
annotations evaluated when the trainer classes are defined. Nothing in them can compute
anything, so a solution that reaches into the stack fails loudly instead of silently.
This file is the task's tests.candidate.setup: the candidate process (the only one that
imports the workspace) runs it before it imports `trainers`, and `lmr record` runs it before
the driver. The modules are registered whatever happens to be installed, so every run sees
the same modules.
"""
import sys
import types

STAND_INS = (
    "transformers",
    "omegaconf",
    "wandb",
    "tensor_parallel",
    "datasets",
    "bs4",
    "torch.distributed.fsdp",
    "torch.distributed.fsdp.api",
    "torch.distributed.fsdp.wrap",
)


def _make_stand_in(name):
    module = types.ModuleType(name, "lmr grader stand-in for %s (tests/candidate_setup.py)" % name)

    def __getattr__(attr):  # PEP 562: called only for attributes not yet defined
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        made = type(attr, (), {"__module__": name, "__doc__": "lmr grader stand-in"})
        setattr(module, attr, made)
        return made

    module.__getattr__ = __getattr__
    module.__path__ = []  # a package, so that its submodules can be imported by name
    return module


def _register_stand_ins():
    for name in STAND_INS:
        sys.modules[name] = _make_stand_in(name)
    # `from torch.distributed.fsdp.api import X` also looks the submodule up on its parent.
    for parent_name, child in (("torch.distributed.fsdp", "api"), ("torch.distributed.fsdp", "wrap")):
        setattr(sys.modules[parent_name], child, sys.modules[parent_name + "." + child])


_register_stand_ins()
