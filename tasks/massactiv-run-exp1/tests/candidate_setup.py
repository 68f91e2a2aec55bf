"""Candidate set-up (ours, not upstream code): a stand-in for `datasets`.

main_vit.py imports lib, and lib/load_data.py imports `datasets` (Hugging Face) at top level
to load the LLM evaluation corpora. run_exp1 never loads a data set. Installed for real,
datasets pulls a pyarrow that does not import with Debian's numpy 1.24, so this set-up
registers, in the candidate process (the only one that imports main_vit), a minimal
`datasets` module (with a module spec: transformers looks packages up with
importlib.util.find_spec) whose load_dataset raises if called.
"""
import importlib.machinery
import sys
import types


def _load_dataset(*args, **kwargs):
    raise RuntimeError("datasets.load_dataset is a stand-in in the grader: run_exp1 loads no data set")


if "datasets" not in sys.modules:
    datasets = types.ModuleType("datasets")
    datasets.__doc__ = "Stand-in for datasets (grader candidate set-up)."
    datasets.__spec__ = importlib.machinery.ModuleSpec("datasets", None)
    datasets.load_dataset = _load_dataset
    sys.modules["datasets"] = datasets
