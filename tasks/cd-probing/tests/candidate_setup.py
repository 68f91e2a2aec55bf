"""Candidate set-up (ours, not upstream code): stand-ins for three packages main.py's imports need.

main.py imports utils.py, which imports `sagemaker` (with `sagemaker.huggingface`) and `baukit`
at top level, and dataset.py, which imports `datasets`. None of them is used by `probing`:
sagemaker deploys models on AWS, baukit's TraceDict is what utils.LLM uses to read hidden
states out of a model, and datasets.load_dataset loads IMDb for DataProcessing. baukit is not
on PyPI (upstream installs it from git), pip could not even resolve sagemaker's dependencies
here in 7.7 minutes, and datasets pulls a pyarrow that does not import with Debian's numpy
1.24; so this set-up registers minimal stand-ins for them in the candidate process (the only one
that imports main.py) before main.py is imported. Everything else main.py imports is
installed for real.
"""
import importlib.machinery
import sys
import types


def _module(name, **attrs):
    module = types.ModuleType(name)
    module.__doc__ = f"Stand-in for {name} (grader candidate set-up): the probing tests never use it."
    # transformers looks packages up with importlib.util.find_spec, which needs a spec
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    for key, value in attrs.items():
        setattr(module, key, value)
    return module


def _unavailable(what):
    def call(*args, **kwargs):
        raise RuntimeError(f"{what} is a stand-in in the grader: the probing tests do not use it")

    return call


class _TraceDict:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("baukit.TraceDict is a stand-in in the grader: the probing tests do not use it")


if "sagemaker" not in sys.modules:
    huggingface = _module(
        "sagemaker.huggingface",
        HuggingFaceModel=_unavailable("sagemaker.huggingface.HuggingFaceModel"),
        get_huggingface_llm_image_uri=_unavailable("sagemaker.huggingface.get_huggingface_llm_image_uri"),
    )
    sagemaker = _module("sagemaker", huggingface=huggingface)
    sagemaker.__path__ = []
    sys.modules["sagemaker"] = sagemaker
    sys.modules["sagemaker.huggingface"] = huggingface

if "baukit" not in sys.modules:
    sys.modules["baukit"] = _module("baukit", TraceDict=_TraceDict)

if "datasets" not in sys.modules:
    sys.modules["datasets"] = _module("datasets", load_dataset=_unavailable("datasets.load_dataset"))
