"""Replays recorded calls and compares what they return: the machinery of the tests
`lmr scaffold tests` generates.

`lmr build` writes this file as `_lmr_replay.py` beside every grader test that refers to
`_lmr_replay` (as it writes codec.py as `_lmr_codec.py`); the generated test loads both
from beside itself, before it imports the code under test. Everything the checks rely on
is bound here at import time: the builtins below are module globals from then on, and
floats and arrays are compared with operators rather than with math.isclose or
numpy.allclose, so a submission that patches those (or builtins) afterwards changes
nothing. Standard library only at import time; numpy, torch and pandas are used when the
recording holds their values. (One file, longer than most: the grader gets exactly one.)

Identity. A call's arguments and `self` are decoded as one group, so an object the
recording shares (a Parameter in param_groups and as a key of the optimizer's state) is
one object again. After the call, an object shared in the recording must be one object
in the implementation's state too (dict keys that are objects are matched that way), and
a Parameter (or leaf tensor that requires grad) marked as there before the call must be
the very tensor the call was given, updated in place. Calls that drew random numbers
start from the random-number states the reference started from ("rng").
"""
from builtins import (  # noqa: A004 - bound now, so later patches of builtins change nothing
    AssertionError, BaseException, Exception, ImportError, StopIteration, bool, bytearray, bytes,
    complex, dict, divmod, enumerate, float, frozenset, getattr, hasattr, id, int, isinstance,
    issubclass, len, list, max, next, repr, reversed, set, sorted, str, tuple, type, vars, zip,
)
import asyncio
import base64
import dataclasses
import enum
import inspect
import random
import struct
import sys

import pytest

_INF = float("inf")
_MISSING = type("Missing", (), {"__repr__": lambda self: "<missing>"})()
_run_async = asyncio.run
_fields, _is_dataclass = dataclasses.fields, dataclasses.is_dataclass
_getattr_static, _signature, _EMPTY = inspect.getattr_static, inspect.signature, inspect.Parameter.empty
_raises, _fail = pytest.raises, pytest.fail
_Enum = enum.Enum
_b64decode, _unpack, _random_setstate = base64.b64decode, struct.unpack, random.setstate
try:
    import numpy as _np

    _ndarray, _np_generic, _errstate = _np.ndarray, _np.generic, _np.errstate
    _isnan, _isinf, _absolute = _np.isnan, _np.isinf, _np.absolute
except ImportError:  # then the recording holds no arrays
    _np = _ndarray = _np_generic = None


def call_ids(target):
    """Test ids for a target's recorded calls: call-000, call-001, ..."""
    return ["call-%03d" % call["index"] for call in target["calls"]]


def parameter_default(target, name, skipped, function, test_file=None):
    """The default of an argument the recording left out (record.skip_args); fails the test
    when the parameter has none, saying to edit supply_skipped_argument() in `test_file`."""
    param = _signature(function).parameters.get(name)
    if param is not None and param.default is not _EMPTY:
        return param.default
    where = test_file.replace("\\", "/").rsplit("/", 1)[-1] if test_file else "the test file"
    _fail(
        "argument %r of %s (%s) was not recorded and has no default: edit supply_skipped_argument() in %s to build one"
        % (name, target["symbol"], skipped.type_name, where),
        pytrace=False,
    )


class _Identity:
    """What one side of a replayed call shares: expected objects bound to the actual ones met
    at the same place. `enforce`: an object met again must be the same actual object."""

    def __init__(self, enforce, given=None, was=None):
        self.enforce = enforce
        self.bound = {}  # id(expected) -> (expected, actual, where it was first met)
        self.given = given or {}  # label -> object the call was given
        self.was = was or {}  # id(expected) -> label of the object it must be


class Replayer:
    """`replay(target, call, implementation)` calls the implementation as the recorded call
    did and checks it; `assert_matches(expected, actual, where)` is the comparison it uses.

    codec, recording: the loaded `_lmr_codec` module and its Recording of calls.json.
    rtol, atol: tolerances for floats, arrays and tensors (math.isclose's rel_tol and
    abs_tol), fixed when the replayer is made. supply_skipped_argument(target, name,
    skipped, function): builds an argument the recording left out; by default the
    parameter's default.
    """

    def __init__(self, codec, recording, rtol, atol, supply_skipped_argument=None):
        self._codec, self._recording = codec, recording
        self._skipped = codec.Skipped
        self._restore_instance, self._resolve_type = codec.restore_instance, codec.resolve_type
        self.rtol, self.atol = float(rtol), float(atol)
        self._supply = supply_skipped_argument or parameter_default

    def _decode_group(self, trees):
        decoder = self._codec.Decoder(self._recording.arrays)
        return decoder, decoder.decode_all(trees)

    # ---------------------------------------------------------------------- replay

    def __call__(self, target, call, implementation, check_mutations=True):
        """Calls `implementation` (the function, or the class that owns the method) as the
        recorded call did, then checks the result (for a generator, every item), in-place
        changes of arguments (unless check_mutations is False) and `self` attributes."""
        __tracebackhide__ = True
        where = "call %d" % call["index"]
        kind, name = target["kind"], target["name"]
        function = implementation if kind == "function" else _getattr_static(implementation, name)
        function = getattr(function, "fget", None) or getattr(function, "__func__", function)
        kw_names = list(call["kwargs"])
        attrs = list(call["self"]["before"]) if kind in ("method", "property") else []
        trees = list(call["args"]) + [call["kwargs"][k] for k in kw_names] + [call["self"]["before"][a] for a in attrs]
        before, values = self._decode_group(trees)

        def argument(param, value):
            return self._supply(target, param, value, function) if isinstance(value, self._skipped) else value

        n = len(call["args"])
        args = [argument(param, v) for param, v in zip(call["arg_names"], values[:n])]
        kwargs = {param: argument(param, v) for param, v in zip(kw_names, values[n:n + len(kw_names)])}
        instance = None
        if kind in ("method", "property"):
            instance = self._restore_instance(implementation, dict(zip(attrs, values[n + len(kw_names):])))
        if "rng" in call:
            self._set_rng(call["rng"])

        def run():
            if kind == "function":
                out = implementation(*args, **kwargs)
            elif kind == "property":
                out = getattr(instance, name)
            elif kind == "method":
                out = getattr(instance, name)(*args, **kwargs)
            else:
                out = getattr(implementation, name)(*args, **kwargs)
            return _run_async(out) if target["async"] else out

        if target.get("generator"):
            if not self._replay_items(call, run(), where):
                return
        elif "raises" in call:
            with _raises(self._exception_type(call["raises"]["type"])):
                run()
            return
        else:
            result = run()
            self._match(self._decode_group([call["result"]])[1][0], result, where + ", return value", "", _Identity(False))
        self._check_after(call, args, kwargs, instance, before, where, check_mutations)

    def _replay_items(self, call, out, where):
        """Checks what a generator call yields, item by item, then how it ends. False when it
        ends in the recorded exception (nothing more to check then, as for other calls)."""
        __tracebackhide__ = True
        if not hasattr(out, "__next__"):
            raise AssertionError("%s: expected an iterator (the target yields its items), got %s" % (where, _show(out)))
        items = call.get("yields", [])
        for k, tree in enumerate(items):
            try:
                item = next(out)
            except StopIteration:
                raise AssertionError("%s: the iterator stopped after %d items, expected %d" % (where, k, len(items))) from None
            self._match(self._decode_group([tree])[1][0], item, "%s, item %d" % (where, k), "", _Identity(False))
        if "raises" in call:
            with _raises(self._exception_type(call["raises"]["type"])):
                next(out)
            return False
        if call.get("closed"):
            close = getattr(out, "close", None)
            if close is not None:
                close()
            return True
        try:
            extra = next(out)
        except StopIteration as stop:
            self._match(self._decode_group([call["result"]])[1][0], stop.value, where + ", return value", "", _Identity(False))
            return True
        raise AssertionError("%s: expected the iterator to stop after %d items, it yielded another: %s" % (where, len(items), _show(extra)))

    def _check_after(self, call, args, kwargs, instance, before, where, check_mutations):
        __tracebackhide__ = True
        mutated = call.get("mutated", {}) if check_mutations else {}
        arg_keys = list(mutated.get("args", {}))
        kw_keys = list(mutated.get("kwargs", {}))
        self_keys = list(call["self"]["after"]) if instance is not None else []
        trees = [mutated["args"][k] for k in arg_keys] + [mutated["kwargs"][k] for k in kw_keys] + [call["self"]["after"][a] for a in self_keys]
        after, expected = self._decode_group(trees)
        ident = _Identity(True, before.objects, after.was)
        checks = [(args[int(i)], "%s, argument %r after the call" % (where, call["arg_names"][int(i)])) for i in arg_keys]
        checks += [(kwargs[k], "%s, argument %r after the call" % (where, k)) for k in kw_keys]
        checks += [(getattr(instance, a, _MISSING), "%s, self.%s after the call" % (where, a)) for a in self_keys]
        for e, (actual, at) in zip(expected, checks):
            self._match(e, actual, at, "", ident)

    def _set_rng(self, states):
        """Puts random, numpy.random and torch in the states the recorded call started from."""
        for lib, state in sorted(states.items()):
            if lib == "random":
                raw = _b64decode(state["words"])
                _random_setstate((state["version"], _unpack("<%dI" % (len(raw) // 4), raw), state["gauss_next"]))
                continue
            value = self._decode_group([state])[1][0]
            if lib == "numpy":
                import numpy

                numpy.random.set_state(value)
            elif lib == "torch":
                import torch

                torch.set_rng_state(value)
            elif lib == "torch_cuda":
                import torch

                if torch.cuda.is_available():
                    torch.cuda.set_rng_state_all(value)

    def _exception_type(self, ref):
        try:
            found = self._resolve_type(ref)
        except Exception:  # recorded from a class that cannot be imported: any exception will do
            return Exception
        return found if isinstance(found, type) and issubclass(found, BaseException) else Exception

    # ----------------------------------------------------------------- comparisons

    def assert_matches(self, expected, actual, where, path=""):
        """Fails with `WHERE PATH: expected X, got Y` at the first difference."""
        __tracebackhide__ = True
        self._match(expected, actual, where, path, None)

    def _match(self, expected, actual, where, path, ident):
        __tracebackhide__ = True
        at = "%s %s" % (where, path) if path else where

        def fail(message):
            __tracebackhide__ = True
            raise AssertionError("%s: %s" % (at, message))

        def differ():
            __tracebackhide__ = True
            fail("expected %s, got %s" % (_show(expected), _show(actual)))

        if ident is not None and _tracked(expected):
            seen = ident.bound.get(id(expected))
            if seen is not None and (seen[1] is actual or ident.enforce):
                if seen[1] is not actual:
                    fail("expected the same object as at %s (they are one object in the recording), got a different one" % seen[2])
                return
            if seen is None:
                ident.bound[id(expected)] = (expected, actual, at)
                label = ident.was.get(id(expected))
                if label is not None and label in ident.given and actual is not ident.given[label]:
                    shape = tuple(getattr(actual, "shape", ()))
                    fail("expected the tensor the call was given, updated in place; got another %s of shape %s" % (type(actual).__name__, shape))
        if _is_number(expected):
            self._check_number(expected, actual, differ)
        elif expected is None or isinstance(expected, (str, bytes, bytearray, set, frozenset, _Enum)):
            if type(actual) is not type(expected) or actual != expected:
                differ()
        elif _ndarray is not None and isinstance(expected, _ndarray):
            if not isinstance(actual, _ndarray):
                fail("expected a numpy array of shape %s, got %s" % (expected.shape, _show(actual)))
            self._check_array(expected, actual, where, path)
        elif _torch_kind(expected) == "tensor":
            self._check_tensor(expected, actual, where, path, fail, ident)
        elif _torch_kind(expected) == "generator":
            torch = sys.modules["torch"]
            if not isinstance(actual, torch.Generator) or not torch.equal(expected.get_state(), actual.get_state()):
                fail("expected a torch.Generator in the recorded state, got %s" % _show(actual))
        elif _top_module(expected) == "pandas":
            self._check_pandas(expected, actual, where, path, fail)
        elif isinstance(expected, (list, tuple)):
            if type(actual) is not type(expected):
                fail("expected a %s of %d, got %s" % (type(expected).__name__, len(expected), _show(actual)))
            if len(actual) != len(expected):
                fail("expected %d items, got %d: %s" % (len(expected), len(actual), _show(actual)))
            for i, (e, a) in enumerate(zip(expected, actual)):
                self._match(e, a, where, "%s[%d]" % (path, i), ident)
        elif isinstance(expected, dict):
            self._check_dict(expected, actual, where, path, fail, ident)
        elif hasattr(expected, "__dict__") or _is_dataclass(expected):
            if type(actual) is not type(expected):
                fail("expected a %s, got %s" % (type(expected).__qualname__, _show(actual)))
            names = [f.name for f in _fields(expected)] if _is_dataclass(expected) else sorted(vars(expected))
            for name in names:
                self._match(getattr(expected, name), getattr(actual, name, _MISSING), where, "%s.%s" % (path, name), ident)
        elif actual != expected:
            differ()

    def _check_dict(self, expected, actual, where, path, fail, ident):
        """Keys by value; keys that are objects (tensors) by identity: the actual object bound to
        the expected one elsewhere (a Parameter in param_groups), else the key at the same position."""
        __tracebackhide__ = True
        if not isinstance(actual, dict):
            fail("expected a dict, got %s" % _show(actual))
        actual_keys = list(actual)
        pairs = []
        for i, k in enumerate(expected):
            if _tracked(k):
                seen = ident.bound.get(id(k)) if ident is not None else None
                if seen is not None:
                    pairs.append((k, seen[1], "<key %d>" % i))
                    continue
                same_place = i < len(actual_keys) and len(actual_keys) == len(expected)
                ak = actual_keys[i] if same_place else _MISSING
                if ak is not _MISSING:
                    self._match(k, ak, where, "%s key %d" % (path, i), ident)
                pairs.append((k, ak, "<key %d>" % i))
            else:
                pairs.append((k, k, repr(k)))
        matched = set()
        missing = []
        for k, ak, _ in pairs:
            if ak is _MISSING or ak not in actual:
                missing.append(k)
            else:
                matched.add(id(ak))
        extra = [a for a in actual_keys if id(a) not in matched and (_tracked(a) or a not in expected)]
        if missing or extra:
            fail("keys differ: missing %s, unexpected %s" % (_show_keys(missing), _show_keys(extra)))
        for k, ak, shown in pairs:
            self._match(expected[k], actual[ak], where, "%s[%s]" % (path, shown), ident)

    def _check_number(self, expected, actual, differ):
        __tracebackhide__ = True
        if not _is_number(actual):
            differ()
        e = expected.item() if _np_generic is not None and isinstance(expected, _np_generic) else expected
        a = actual.item() if _np_generic is not None and isinstance(actual, _np_generic) else actual
        if isinstance(e, bool) or isinstance(a, bool):
            if type(e) is not type(a) or a != e:
                differ()
        elif isinstance(e, int):
            if not isinstance(a, int) or a != e:
                differ()
        elif isinstance(e, complex) or isinstance(a, complex):
            e, a = complex(e), complex(a)
            if not (self._close(e.real, a.real) and self._close(e.imag, a.imag)):
                differ()
        elif not self._close(e, float(a)):
            differ()

    def _close(self, expected, actual):
        """math.isclose(actual, expected, rel_tol=rtol, abs_tol=atol), with nan equal to nan."""
        if expected == actual:
            return True
        if expected != expected or actual != actual:
            return expected != expected and actual != actual
        if expected in (_INF, -_INF) or actual in (_INF, -_INF):
            return False
        diff = expected - actual if expected > actual else actual - expected
        scale = max(expected if expected > 0 else -expected, actual if actual > 0 else -actual)
        return diff <= max(self.rtol * scale, self.atol)

    def _check_array(self, expected, actual, where, path, check_dtype=True):
        __tracebackhide__ = True
        at = "%s %s" % (where, path) if path else where
        if expected.shape != actual.shape:
            raise AssertionError("%s: expected shape %s, got shape %s" % (at, expected.shape, actual.shape))
        if check_dtype and expected.dtype != actual.dtype:
            raise AssertionError("%s: expected dtype %s, got dtype %s" % (at, expected.dtype, actual.dtype))
        if expected.dtype.kind == "O" or actual.dtype.kind == "O":
            return self._match(expected.tolist(), actual.tolist(), where, path, None)
        if expected.dtype.kind in "fc":
            with _errstate(invalid="ignore", over="ignore"):
                finite = ~_isinf(expected) & ~_isinf(actual)
                near = _absolute(expected - actual) <= self.atol + self.rtol * _absolute(expected)
                ok = (expected == actual) | (_isnan(expected) & _isnan(actual)) | (finite & near)
        else:
            ok = expected == actual
        bad = (~ok).reshape(-1).nonzero()[0]
        if len(bad):
            first = int(bad[0])
            raise AssertionError(
                "%s: at index %s: expected %r, got %r (%d of %d elements differ; rtol %g, atol %g)"
                % (at, _unravel(first, expected.shape), expected.reshape(-1)[first].item(),
                   actual.reshape(-1)[first].item(), len(bad), expected.size, self.rtol, self.atol)
            )

    def _check_tensor(self, expected, actual, where, path, fail, ident):
        """Shape, dtype, values, then what a training step relies on: Parameter or not,
        requires_grad, and .grad (compared like a tensor)."""
        __tracebackhide__ = True
        torch = sys.modules["torch"]
        if not isinstance(actual, torch.Tensor):
            fail("expected a tensor of shape %s, got %s" % (tuple(expected.shape), _show(actual)))
        if tuple(actual.shape) != tuple(expected.shape):
            fail("expected shape %s, got shape %s" % (tuple(expected.shape), tuple(actual.shape)))
        if actual.dtype != expected.dtype:
            fail("expected dtype %s, got dtype %s" % (expected.dtype, actual.dtype))
        self._check_array(_tensor_values(expected), _tensor_values(actual), where, path, check_dtype=False)
        if isinstance(expected, torch.nn.Parameter) and not isinstance(actual, torch.nn.Parameter):
            fail("expected a torch.nn.Parameter, got a %s" % type(actual).__name__)
        if bool(actual.requires_grad) != bool(expected.requires_grad):
            fail("expected requires_grad=%s, got requires_grad=%s" % (expected.requires_grad, actual.requires_grad))
        e_grad = expected.grad if expected.is_leaf else None
        a_grad = actual.grad if actual.is_leaf else None
        if e_grad is None and a_grad is not None:
            fail("expected .grad None, got a tensor of shape %s" % (tuple(a_grad.shape),))
        if e_grad is not None:
            if a_grad is None:
                fail("expected .grad of shape %s, got None" % (tuple(e_grad.shape),))
            self._match(e_grad, a_grad, where, path + ".grad", ident)

    def _check_pandas(self, expected, actual, where, path, fail):
        __tracebackhide__ = True
        if type(actual) is not type(expected):
            fail("expected a %s, got %s" % (type(expected).__name__, _show(actual)))
        if hasattr(expected, "columns"):
            self._match(list(expected.columns), list(actual.columns), where, path + ".columns", None)
            columns = [(expected.iloc[:, i], actual.iloc[:, i], "%s[%r]" % (path, c)) for i, c in enumerate(expected.columns)]
        else:
            self._match(expected.name, actual.name, where, path + ".name", None)
            columns = [(expected, actual, path)]
        self._match(expected.index.to_numpy(), actual.index.to_numpy(), where, path + ".index", None)
        for e, a, p in columns:
            if str(e.dtype) != str(a.dtype):
                raise AssertionError("%s: expected dtype %s, got dtype %s" % (("%s %s" % (where, p)).rstrip(), e.dtype, a.dtype))
            self._match(e.to_numpy(), a.to_numpy(), where, p, None)



def _is_number(x):
    if _np_generic is not None and isinstance(x, _np_generic):
        return x.dtype.kind in "biufc"
    return isinstance(x, (int, float, complex)) and not isinstance(x, _Enum)


def _unravel(flat, shape):
    index = []
    for size in reversed(shape):
        flat, i = divmod(flat, size)
        index.append(i)
    return tuple(reversed(index))


def _tensor_values(t):
    t = t.detach().cpu()
    if t.dtype == sys.modules["torch"].bfloat16:
        t = t.float()
    return t.resolve_conj().numpy() if t.is_complex() else t.numpy()


def _top_module(x):
    return type(x).__module__.split(".")[0]


def _torch_kind(x):
    torch = sys.modules.get("torch") if _top_module(x) == "torch" else None
    if torch is None:
        return None
    return "tensor" if isinstance(x, torch.Tensor) else "generator" if isinstance(x, torch.Generator) else None


def _tracked(x):
    """Objects whose identity the recording keeps (codec.is_tracked, on decoded values)."""
    if isinstance(x, (list, dict, set, bytearray)):
        return True
    if x is None or isinstance(x, (str, bytes, int, float, complex, tuple, frozenset, _Enum, type)):
        return False
    if _np_generic is not None and isinstance(x, _np_generic):
        return False
    if _ndarray is not None and isinstance(x, _ndarray):
        return True
    if _top_module(x) == "torch":
        torch = sys.modules["torch"]
        return isinstance(x, (torch.Tensor, torch.Generator, torch.nn.Module, torch.optim.Optimizer))
    return hasattr(x, "__dict__") or _is_dataclass(x)


def _show_keys(keys):
    return "[%s]" % ", ".join(_show(k) for k in keys)


def _show(x):
    if _ndarray is not None and isinstance(x, _ndarray) and x.size > 8:
        return "array(shape=%s, dtype=%s)" % (x.shape, x.dtype)
    text = repr(x)
    return text if len(text) <= 200 else text[:190] + "...(%d chars)" % len(text)
