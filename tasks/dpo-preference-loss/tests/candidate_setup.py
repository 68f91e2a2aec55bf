"""Grader-side set-up (ours, not upstream code): stand-ins for imports the target never uses.

`trainers.py` imports, at module level, the whole training stack: transformers, omegaconf,
wandb, tensor_parallel, FSDP from torch.distributed, tqdm, and (through
`preference_datasets.py`) Hugging Face datasets and BeautifulSoup. `preference_loss` needs
only torch. The stack cannot be imported for real on the task's base (Debian bookworm,
Python 3.11, Debian's torch 1.13.1):

* torch.distributed.fsdp of Debian's torch fails at import time on Python 3.11 (a dataclass
  with a mutable default), and the upstream also imports `FullOptimStateDictConfig`, which
  torch 1.13 does not have at all;
* `tensor-parallel==1.2.4` depends on peft and torch, so pip replaces Debian's CPU torch with
  a CUDA build from PyPI (55 packages; measured 2 min and 5.7 GB for the upstream's
  requirement set, after which `import trainers` still failed).

Since `import trainers` needs stand-ins for those two in any case, the other modules the
target never reaches (transformers, omegaconf, wandb, datasets, bs4) are stood in for too
rather than installed: task.json's environment.stand_ins gives each one's cost. This file is
the task's tests.candidate.setup: the candidate process (the only one that imports the
workspace) runs it before it imports `trainers`, and `lmr record` runs it before the driver;
it registers small stand-in modules under those names.
Every attribute of a stand-in is a placeholder class named after it, enough for
`from X import Y`, base classes and type annotations at class-definition time. They are
registered unconditionally, so the grader behaves the same whatever happens to be installed.
torch (tensors, autograd, torch.nn.functional), numpy and tqdm are the real Debian packages.
"""
import importlib.machinery
import sys
import types

STANDS_IN_FOR = (
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


class _StandInModule(types.ModuleType):
    """A module whose every public attribute is a placeholder class (created on first use)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        placeholder = type(name, (), {"__module__": self.__name__, "__doc__": "grader stand-in"})
        setattr(self, name, placeholder)
        return placeholder


def install_stand_ins():
    for name in STANDS_IN_FOR:
        module = _StandInModule(name, "Stand-in registered by the grader's candidate_setup.py.")
        module.__spec__ = importlib.machinery.ModuleSpec(name, loader=None)
        module.__path__ = []  # lets `import a.b` find registered submodules
        sys.modules[name] = module
    # `from torch.distributed.fsdp.api import ...` also reads the parent package's attribute.
    sys.modules["torch.distributed.fsdp"].api = sys.modules["torch.distributed.fsdp.api"]
    sys.modules["torch.distributed.fsdp"].wrap = sys.modules["torch.distributed.fsdp.wrap"]


install_stand_ins()
