"""Candidate set-up (ours, not upstream code): stand-ins for three packages the workspace imports.

utils.py imports `sagemaker` (with `sagemaker.huggingface`) and `baukit` at top level, and
dataset.py imports `datasets`. None of them can be installed here (see task.json,
environment.stand_ins), so this set-up registers stand-ins in the candidate process before
the workspace is imported:

- sagemaker and datasets are never used by the targets: their functions raise if called;
- baukit is used: utils.LLM reads the hidden states through `baukit.TraceDict`. The stand-in
  below is a small implementation of baukit's documented tracing API (nethook's Trace,
  TraceDict, StopForward, get_module) written for these tests with forward hooks: a traced
  layer keeps its output as `.output` (and its input as `.input` with retain_input=True),
  with the clone / detach / retain_grad / edit_output / stop options, and the hooks are
  removed when the context ends.
"""
import contextlib
import importlib.machinery
import inspect
import sys
import types
from collections import OrderedDict


def _module(name, **attrs):
    module = types.ModuleType(name)
    module.__doc__ = f"Stand-in for {name} (grader candidate set-up)."
    # transformers looks packages up with importlib.util.find_spec, which needs a spec
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    for key, value in attrs.items():
        setattr(module, key, value)
    return module


def _unavailable(what):
    def call(*args, **kwargs):
        raise RuntimeError(f"{what} is a stand-in in the grader: the tests do not use it")

    return call


# ---------------------------------------------------------------- baukit (functional)


class StopForward(Exception):
    """Raised after a traced layer with stop=True; the tracing context swallows it."""


def get_module(model, name):
    for candidate_name, module in model.named_modules():
        if candidate_name == name:
            return module
    raise LookupError(name)


def _keep(value, clone=False, detach=False, retain_grad=False):
    import torch

    if not (clone or detach or retain_grad):
        return value
    if isinstance(value, torch.Tensor):
        if retain_grad:
            if not value.requires_grad:
                value.requires_grad = True
            value.retain_grad()
        elif detach:
            value = value.detach()
        if clone:
            value = value.clone()
        return value
    if isinstance(value, dict):
        return type(value)((k, _keep(v, clone, detach)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_keep(v, clone, detach) for v in value)
    raise TypeError(f"cannot keep a value of type {type(value).__name__}")


def _call_edit(fn, output, layer):
    try:
        names = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn(output, layer)
    if "output" in names and "layer" in names:
        return fn(output=output, layer=layer)
    if len(names) >= 2:
        return fn(output, layer)
    return fn(output)


class Trace(contextlib.AbstractContextManager):
    def __init__(self, module, layer=None, retain_output=True, retain_input=False, clone=False,
                 detach=False, retain_grad=False, edit_output=None, stop=False):
        self.layer = layer
        self.stop = stop
        target = get_module(module, layer) if layer is not None else module
        tracer = self

        def hook(_module, inputs, output):
            if retain_input:
                tracer.input = _keep(inputs[0] if len(inputs) == 1 else inputs, clone, detach)
            if edit_output is not None:
                output = _call_edit(edit_output, output, tracer.layer)
            if retain_output:
                tracer.output = _keep(output, clone, detach, retain_grad)
                if retain_grad:
                    output = _keep(tracer.output, clone=True)
            if stop:
                raise StopForward()
            return output

        self._handle = target.register_forward_hook(hook)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return bool(self.stop and exc_type is not None and issubclass(exc_type, StopForward))

    def close(self):
        self._handle.remove()


class TraceDict(OrderedDict, contextlib.AbstractContextManager):
    def __init__(self, module, layers=None, retain_output=True, retain_input=False, clone=False,
                 detach=False, retain_grad=False, edit_output=None, stop=False):
        super().__init__()
        self.stop = stop
        ordered = list(OrderedDict.fromkeys(layers or []))
        for position, layer in enumerate(ordered):
            self[layer] = Trace(module, layer, retain_output=retain_output, retain_input=retain_input,
                                clone=clone, detach=detach, retain_grad=retain_grad,
                                edit_output=edit_output, stop=stop and position == len(ordered) - 1)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return bool(self.stop and exc_type is not None and issubclass(exc_type, StopForward))

    def close(self):
        for trace in reversed(list(self.values())):
            trace.close()


# ---------------------------------------------------------------- registration

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
    _api = dict(Trace=Trace, TraceDict=TraceDict, StopForward=StopForward, get_module=get_module)
    nethook = _module("baukit.nethook", **_api)
    baukit = _module("baukit", nethook=nethook, **_api)
    baukit.__path__ = []
    sys.modules["baukit"] = baukit
    sys.modules["baukit.nethook"] = nethook

if "datasets" not in sys.modules:
    sys.modules["datasets"] = _module("datasets", load_dataset=_unavailable("datasets.load_dataset"))
