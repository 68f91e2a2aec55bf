"""The candidate's set-up (ours, not upstream code): import naive.py without the package initialisers.

It runs in the candidate process (tests.candidate.setup) before the workspace is imported,
and before the driver when `lmr record` runs it; the tests' own process never imports the
workspace (its set-up is tests/conftest.py).

`native_sparse_attention/__init__.py` imports transformers, the model (which imports the
`fla` library of the flash-linear-attention git submodule) and `ops/parallel.py` (Triton
kernels); `native_sparse_attention/ops/__init__.py` imports `parallel.py` too. The target,
`naive_nsa` in `native_sparse_attention/ops/naive.py`, needs none of them: that file
imports only torch and einops. `parallel.py` is not in the workspace (it implements the
same attention), the submodule is not checked out, and Triton is not packaged for Debian.
So before anything imports the package, the two packages are registered as plain
packages over their folders in the tree, without running their `__init__.py`: importing
`native_sparse_attention.ops.naive` then executes the real naive.py and nothing else.
"""
import importlib.machinery
import importlib.util
import os
import sys


def _tree_root():
    for base in [os.getcwd(), *sys.path]:
        if base and os.path.isfile(os.path.join(base, "native_sparse_attention", "ops", "naive.py")):
            return os.path.abspath(base)
    raise RuntimeError("native_sparse_attention/ops/naive.py not found from the current directory or sys.path")


def _register_package(name, folder):
    if name in sys.modules:
        return
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [folder]
    module = importlib.util.module_from_spec(spec)
    module.__path__ = [folder]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


_root = _tree_root()
_register_package("native_sparse_attention", os.path.join(_root, "native_sparse_attention"))
_register_package("native_sparse_attention.ops", os.path.join(_root, "native_sparse_attention", "ops"))

# One intra-op thread: the tests run many tiny tensor operations, and on a shared 2-core
# machine torch's thread pool made each test ~50x slower (measured: 5.2 s vs 0.08 s for one
# test). Results are computed the same way in the recording (it runs this file first).
import torch  # noqa: E402

torch.set_num_threads(1)
