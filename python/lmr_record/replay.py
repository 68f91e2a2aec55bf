"""Replays recorded calls and compares what they return: the machinery of the tests
`lmr scaffold tests` generates.

`lmr build` writes this file as `_lmr_replay.py` beside every grader test that refers to
`_lmr_replay` (as it writes codec.py as `_lmr_codec.py`); the generated test loads both
from beside itself, before it imports the code under test. Everything the checks rely on
is bound here at import time: the builtins below are module globals from then on, and
floats and arrays are compared with operators rather than with math.isclose or
numpy.allclose, so a submission that patches those (or builtins) afterwards changes
nothing. Standard library only at import time; numpy, torch and pandas are used when the
recording holds their values.
"""
from builtins import (  # noqa: A004 - bound now, so later patches of builtins change nothing
    AssertionError, BaseException, Exception, ImportError, bool, bytearray, bytes, complex, dict,
    divmod, enumerate, float, frozenset, getattr, hasattr, int, isinstance, issubclass, len, list,
    max, repr, reversed, set, sorted, str, tuple, type, vars, zip,
)
import asyncio
import dataclasses
import enum
import inspect
import sys

import pytest

_INF = float("inf")
_MISSING = type("Missing", (), {"__repr__": lambda self: "<missing>"})()
_run_async = asyncio.run
_fields, _is_dataclass = dataclasses.fields, dataclasses.is_dataclass
_getattr_static, _signature, _EMPTY = inspect.getattr_static, inspect.signature, inspect.Parameter.empty
_raises, _fail = pytest.raises, pytest.fail
_Enum = enum.Enum
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
        self._decode, self._skipped = recording.decode, codec.Skipped
        self._restore_instance, self._resolve_type = codec.restore_instance, codec.resolve_type
        self.rtol, self.atol = float(rtol), float(atol)
        self._supply = supply_skipped_argument or parameter_default

    # ---------------------------------------------------------------------- replay

    def __call__(self, target, call, implementation, check_mutations=True):
        """Calls `implementation` (the function, or the class that owns the method) as the
        recorded call did, then checks the result, in-place changes of arguments (unless
        check_mutations is False) and `self` attributes."""
        __tracebackhide__ = True
        decode = self._decode
        where = "call %d" % call["index"]
        kind, name = target["kind"], target["name"]
        function = implementation if kind == "function" else _getattr_static(implementation, name)
        function = getattr(function, "fget", None) or getattr(function, "__func__", function)

        def argument(param, tree):
            value = decode(tree)
            return self._supply(target, param, value, function) if isinstance(value, self._skipped) else value

        args = [argument(param, tree) for param, tree in zip(call["arg_names"], call["args"])]
        kwargs = {param: argument(param, tree) for param, tree in call["kwargs"].items()}
        instance = None
        if kind in ("method", "property"):
            instance = self._restore_instance(implementation, decode(call["self"]["before"]))

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

        if "raises" in call:
            with _raises(self._exception_type(call["raises"]["type"])):
                run()
            return
        result = run()
        self.assert_matches(decode(call["result"]), result, where + ", return value")
        mutated = call.get("mutated", {}) if check_mutations else {}
        for i, after in mutated.get("args", {}).items():
            param = call["arg_names"][int(i)]
            self.assert_matches(decode(after), args[int(i)], "%s, argument %r after the call" % (where, param))
        for param, after in mutated.get("kwargs", {}).items():
            self.assert_matches(decode(after), kwargs[param], "%s, argument %r after the call" % (where, param))
        if instance is not None:
            for attr, after in call["self"]["after"].items():
                self.assert_matches(decode(after), getattr(instance, attr, _MISSING), "%s, self.%s after the call" % (where, attr))

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
        at = "%s %s" % (where, path) if path else where

        def fail(message):
            __tracebackhide__ = True
            raise AssertionError("%s: %s" % (at, message))

        def differ():
            __tracebackhide__ = True
            fail("expected %s, got %s" % (_show(expected), _show(actual)))

        if _is_number(expected):
            self._check_number(expected, actual, differ)
        elif expected is None or isinstance(expected, (str, bytes, bytearray, set, frozenset, _Enum)):
            if type(actual) is not type(expected) or actual != expected:
                differ()
        elif _ndarray is not None and isinstance(expected, _ndarray):
            if not isinstance(actual, _ndarray):
                fail("expected a numpy array of shape %s, got %s" % (expected.shape, _show(actual)))
            self._check_array(expected, actual, where, path)
        elif _top_module(expected) == "torch":
            self._check_tensor(expected, actual, where, path, fail)
        elif _top_module(expected) == "pandas":
            self._check_pandas(expected, actual, where, path, fail)
        elif isinstance(expected, (list, tuple)):
            if type(actual) is not type(expected):
                fail("expected a %s of %d, got %s" % (type(expected).__name__, len(expected), _show(actual)))
            if len(actual) != len(expected):
                fail("expected %d items, got %d: %s" % (len(expected), len(actual), _show(actual)))
            for i, (e, a) in enumerate(zip(expected, actual)):
                self.assert_matches(e, a, where, "%s[%d]" % (path, i))
        elif isinstance(expected, dict):
            if not isinstance(actual, dict):
                fail("expected a dict, got %s" % _show(actual))
            missing = [k for k in expected if k not in actual]
            extra = [k for k in actual if k not in expected]
            if missing or extra:
                fail("keys differ: missing %r, unexpected %r" % (missing, extra))
            for k, e in expected.items():
                self.assert_matches(e, actual[k], where, "%s[%r]" % (path, k))
        elif hasattr(expected, "__dict__") or _is_dataclass(expected):
            if type(actual) is not type(expected):
                fail("expected a %s, got %s" % (type(expected).__qualname__, _show(actual)))
            names = [f.name for f in _fields(expected)] if _is_dataclass(expected) else sorted(vars(expected))
            for name in names:
                self.assert_matches(getattr(expected, name), getattr(actual, name, _MISSING), where, "%s.%s" % (path, name))
        elif actual != expected:
            differ()

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
            return self.assert_matches(expected.tolist(), actual.tolist(), where, path)
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

    def _check_tensor(self, expected, actual, where, path, fail):
        __tracebackhide__ = True
        torch = sys.modules["torch"]
        if not isinstance(actual, torch.Tensor):
            fail("expected a tensor of shape %s, got %s" % (tuple(expected.shape), _show(actual)))
        if tuple(actual.shape) != tuple(expected.shape):
            fail("expected shape %s, got shape %s" % (tuple(expected.shape), tuple(actual.shape)))
        if actual.dtype != expected.dtype:
            fail("expected dtype %s, got dtype %s" % (expected.dtype, actual.dtype))
        self._check_array(_tensor_values(expected), _tensor_values(actual), where, path, check_dtype=False)

    def _check_pandas(self, expected, actual, where, path, fail):
        __tracebackhide__ = True
        if type(actual) is not type(expected):
            fail("expected a %s, got %s" % (type(expected).__name__, _show(actual)))
        if hasattr(expected, "columns"):
            self.assert_matches(list(expected.columns), list(actual.columns), where, path + ".columns")
            columns = [(expected.iloc[:, i], actual.iloc[:, i], "%s[%r]" % (path, c)) for i, c in enumerate(expected.columns)]
        else:
            self.assert_matches(expected.name, actual.name, where, path + ".name")
            columns = [(expected, actual, path)]
        self.assert_matches(expected.index.to_numpy(), actual.index.to_numpy(), where, path + ".index")
        for e, a, p in columns:
            if str(e.dtype) != str(a.dtype):
                raise AssertionError("%s: expected dtype %s, got dtype %s" % (("%s %s" % (where, p)).rstrip(), e.dtype, a.dtype))
            self.assert_matches(e.to_numpy(), a.to_numpy(), where, p)


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


def _show(x):
    if _ndarray is not None and isinstance(x, _ndarray) and x.size > 8:
        return "array(shape=%s, dtype=%s)" % (x.shape, x.dtype)
    text = repr(x)
    return text if len(text) <= 200 else text[:190] + "...(%d chars)" % len(text)
