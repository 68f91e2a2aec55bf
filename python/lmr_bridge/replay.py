"""Replays of recorded calls, decided in the oracle: the machinery of the tests `lmr scaffold
tests` writes.

    from lmr_bridge import Recording, Replayer, call_ids

    RECORDING = Recording(Path(__file__).parent / "../fixtures/calls.json")
    replay = Replayer(RECORDING, rtol=1e-6, atol=1e-8)

    @pytest.mark.parametrize("call", TARGET["calls"], ids=call_ids(TARGET))
    def test_target(call):
        replay(TARGET, call)

A replay sends the recorded call's *inputs* (arguments, `self` before, random-number
states) to the candidate, which makes the call on the code under test and answers with what
it did: the result (or exception, or a generator's items), the arguments the reference
changed, `self` after, and which of those are the very objects it was given. The recorded
answers never leave this process. Both sides are decoded strictly (strict.py) and compared
here: floats, arrays and tensors within rtol/atol (math.isclose's rel_tol and abs_tol),
everything else exactly, shapes, dtypes, Parameter-ness, requires_grad and .grad included.
"""
import json

from lmr_record import codec

from . import oracle, ship, strict
from .values import EnumMember, Instance

_INF = float("inf")
_MISSING = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


class Recording:
    """A calls.json with its arrays (loaded when first needed), as the tests read it."""

    def __init__(self, path):
        self._inner = codec.Recording(path)
        self.path = self._inner.path
        self.data = self._inner.data

    def target(self, file, symbol):
        return self._inner.target(file, symbol)

    def arrays(self):
        return self._inner.arrays()

    def decode(self, tree):
        """A recorded value, decoded as the oracle decodes the candidate's answers."""
        return strict.decode_group([tree], self.arrays)[1][0]

    def raw(self, tree):
        """A recorded tree to pass to a probe or a call as it is: the candidate decodes it with
        the full codec (instances of the code's own classes come back as such there). Trees
        passed in one request are decoded as one group, so take them from one recorded call."""
        return oracle.Raw(tree, self.arrays)


def call_ids(target):
    """Test ids for a target's recorded calls: call-000, call-001, ..."""
    return ["call-%03d" % call["index"] for call in target["calls"]]


class _Identity:
    """What one side of a replayed call shares: expected objects bound to the actual ones met
    at the same place. `enforce`: an object met again must be the same actual object. `exp_was`
    and `act_was`: id(value) -> the recording's label of the object the call was given that
    it must be / that it is."""

    def __init__(self, enforce, exp_was=None, act_was=None):
        self.enforce = enforce
        self.bound = {}
        self.exp_was = exp_was or {}
        self.act_was = act_was or {}


class Replayer:
    """`replay(target, call)` makes the recorded call in the candidate and checks it;
    `assert_matches(expected, actual, where)` is the comparison it uses.

    rtol, atol: tolerances for floats, arrays and tensors. supply_skipped_argument: a
    @probe_helper function `(symbol, name, type_name) -> value` that builds, in the
    candidate, an argument the recording left out (record.skip_args); by default the
    parameter's default.
    """

    def __init__(self, recording, rtol, atol, supply_skipped_argument=None):
        if not isinstance(recording, Recording):
            raise TypeError("Replayer takes a lmr_bridge.Recording")
        self.recording = recording
        self.rtol, self.atol = float(rtol), float(atol)
        self._supply = _payload(supply_skipped_argument, "supply_skipped_argument") if supply_skipped_argument else None

    def _decode(self, trees, arrays):
        try:
            return strict.decode_group(trees, arrays)
        except strict.Undecodable as e:
            raise oracle.CandidateError("the candidate's replay answer could not be decoded: %s" % e) from None

    # ---------------------------------------------------------------------- replay

    def __call__(self, target, call, check_mutations=True, wrap=None):
        """Makes the recorded `call` of `target` in the candidate and checks what it did.
        `wrap`: a @probe_helper `(function, *args, **kwargs)` that makes the call there (a
        context its caller provides, such as torch.no_grad())."""
        __tracebackhide__ = True
        where = "call %d" % call["index"]
        kind = target["kind"]
        mutated = call.get("mutated", {}) if check_mutations else {}
        self_after = call["self"].get("after", {}) if kind in ("method", "property") and "self" in call else {}
        want = {"args": list(mutated.get("args", {})), "kwargs": list(mutated.get("kwargs", {})), "self": list(self_after)}
        request = {
            "op": "replay",
            "target": {k: target.get(k) for k in ("module", "owner", "name", "kind", "async", "generator", "symbol", "file")},
            "call": {
                "arg_names": call["arg_names"],
                "args": call["args"],
                "kwargs": call["kwargs"],
                "self_before": call["self"]["before"] if "self" in call else None,
                **({"rng": call["rng"]} if "rng" in call else {}),
            },
            "want": want,
            "wrap": _payload(wrap, "wrap") if wrap is not None else None,
            "supply": self._supply,
        }
        if target.get("generator"):
            request["generator"] = {"items": len(call.get("yields", [])), "end": "raise" if "raises" in call else "closed" if call.get("closed") else "stop"}
        inputs = [request["call"]["args"], request["call"]["kwargs"], request["call"]["self_before"], request["call"].get("rng")]
        table = self.recording.arrays() if self.recording.data.get("arrays") else {}
        keys = set()
        for tree in inputs:
            keys |= _array_keys(tree)
        arrays = {k: table[k] for k in keys}
        reply, reply_arrays = oracle.candidate.request(request, arrays, "the replay of %s %s" % (target.get("symbol"), where))
        if "replay" not in reply:
            oracle.answer(reply, reply_arrays, "the replay of %s %s" % (target.get("symbol"), where))
            raise oracle.CandidateError("the candidate did not replay %s" % where)
        got = reply["replay"]
        if not isinstance(got, dict):
            raise oracle.CandidateError("the candidate's replay answer is not an object")

        if target.get("generator"):
            if not self._check_items(call, got, reply_arrays, where):
                return
        elif "raises" in call:
            self._check_raised(call["raises"], got, where, reply_arrays)
            return
        else:
            if "raised" in got:
                raise oracle.remote_exception(got["raised"])
            if "result" not in got:
                raise oracle.CandidateError("%s: the candidate's replay answer has no result" % where)
            expected = self._decode([call["result"]], table)[1][0]
            actual = self._decode([got["result"]], reply_arrays)[1][0]
            self._match(expected, actual, where + ", return value", "", _Identity(False))
        self._check_after(call, got, reply_arrays, table, where, kind, check_mutations)

    def _check_raised(self, expected, got, where, arrays):
        __tracebackhide__ = True
        if "raised" not in got:
            shown = ""
            if "result" in got:
                try:
                    shown = ": " + _show(self._decode([got["result"]], arrays)[1][0])
                except oracle.CandidateError:
                    shown = ""
            raise AssertionError("%s: expected %s to be raised, the call returned%s" % (where, expected["type"], shown))
        info = got["raised"]
        mro = info.get("mro") or [] if isinstance(info, dict) else []
        want = expected["type"]
        if want not in mro and not _same_builtin(want, mro):
            raise AssertionError("%s: expected %s to be raised, got %s: %s" % (where, want, info.get("type"), str(info.get("message", ""))[:500]))

    def _check_items(self, call, got, arrays, where):
        """Checks a generator call's items, then how it ended. False when it ended in the
        recorded exception (nothing more to check then, as for other calls)."""
        __tracebackhide__ = True
        table = self.recording.arrays() if self.recording.data.get("arrays") else {}
        if "raised" in got:
            raise oracle.remote_exception(got["raised"])
        end = got.get("end") or {}
        if end.get("kind") == "not-iterator":
            raise AssertionError("%s: expected an iterator (the target yields its items), got a %s" % (where, end.get("type")))
        items = call.get("yields", [])
        actual_items = got.get("items") or []
        for k, tree in enumerate(actual_items):
            expected = self._decode([items[k]], table)[1][0]
            actual = self._decode([tree], arrays)[1][0]
            self._match(expected, actual, "%s, item %d" % (where, k), "", _Identity(False))
        if end.get("kind") == "stopped-early":
            raise AssertionError("%s: the iterator stopped after %d items, expected %d" % (where, end.get("after"), len(items)))
        if end.get("kind") == "raised" and len(actual_items) < len(items):
            raise oracle.remote_exception(end.get("raised") or {})
        if "raises" in call:
            if end.get("kind") != "raised":
                raise AssertionError("%s: expected %s to be raised after %d items" % (where, call["raises"]["type"], len(items)))
            self._check_raised(call["raises"], {"raised": end["raised"]}, where, arrays)
            return False
        if call.get("closed"):
            return True
        if end.get("kind") == "item":
            raise AssertionError("%s: expected the iterator to stop after %d items, it yielded another: %s" % (where, len(items), _show(self._decode([end["item"]], arrays)[1][0])))
        if end.get("kind") == "raised":
            raise oracle.remote_exception(end.get("raised") or {})
        expected = self._decode([call["result"]], table)[1][0]
        actual = self._decode([end.get("value")], arrays)[1][0]
        self._match(expected, actual, where + ", return value", "", _Identity(False))
        return True

    def _check_after(self, call, got, arrays, table, where, kind, check_mutations):
        __tracebackhide__ = True
        mutated = call.get("mutated", {}) if check_mutations else {}
        arg_keys = list(mutated.get("args", {}))
        kw_keys = list(mutated.get("kwargs", {}))
        self_after = call["self"].get("after", {}) if kind in ("method", "property") and "self" in call else {}
        self_keys = list(self_after)
        if not (arg_keys or kw_keys or self_keys):
            return
        after = got.get("after")
        if not isinstance(after, dict):
            raise oracle.CandidateError("%s: the candidate's replay answer has no state after the call" % where)
        missing = set(got.get("missing_self") or [])
        exp_trees = [mutated["args"][k] for k in arg_keys] + [mutated["kwargs"][k] for k in kw_keys] + [self_after[a] for a in self_keys]
        exp_dec, expected = self._decode(exp_trees, table)
        act_keys = [("args", k) for k in arg_keys] + [("kwargs", k) for k in kw_keys] + [("self", a) for a in self_keys if a not in missing]
        act_trees = []
        for where_, key in act_keys:
            tree = (after.get(where_) or {}).get(key, _MISSING)
            if tree is _MISSING:
                raise oracle.CandidateError("%s: the candidate's replay answer lacks %s %r after the call" % (where, where_, key))
            act_trees.append(tree)
        act_dec, actual_list = self._decode(act_trees, arrays)
        actual_by = dict(zip(act_keys, actual_list))
        ident = _Identity(True, dict(exp_dec.was), dict(act_dec.was))
        checks = [(("args", k), "%s, argument %r after the call" % (where, call["arg_names"][int(k)])) for k in arg_keys]
        checks += [(("kwargs", k), "%s, argument %r after the call" % (where, k)) for k in kw_keys]
        checks += [(("self", a), "%s, self.%s after the call" % (where, a)) for a in self_keys]
        for e, (slot, at) in zip(expected, checks):
            self._match(e, actual_by.get(slot, _MISSING), at, "", ident)

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

        if actual is _MISSING:
            fail("expected %s, got nothing (the attribute is not there)" % _show(expected))
        if ident is not None and _tracked(expected):
            seen = ident.bound.get(id(expected))
            # met again: it must be the same actual object where the recording says the call was
            # given it (a Parameter updated in place, shared by param_groups and the state);
            # elsewhere the recording may have written the same object out twice before the
            # call (its identity did not matter there), so the values are compared again
            if seen is not None and (seen[1] is actual or (ident.enforce and id(expected) in ident.exp_was)):
                if seen[1] is not actual:
                    fail("expected the same object as at %s (they are one object in the recording), got a different one" % seen[2])
                return
            if seen is None:
                ident.bound[id(expected)] = (expected, actual, at)
                want = ident.exp_was.get(id(expected))
                if want is not None and ident.act_was.get(id(actual)) != want:
                    shape = tuple(getattr(actual, "shape", ()))
                    fail("expected the tensor the call was given, updated in place; got another %s of shape %s" % (type(actual).__name__, shape))
        if _is_number(expected):
            self._check_number(expected, actual, differ)
        elif expected is None or isinstance(expected, (str, bytes, bytearray, set, frozenset, EnumMember)):
            if type(actual) is not type(expected) or actual != expected:
                differ()
        elif _is_ndarray(expected):
            if not _is_ndarray(actual):
                fail("expected a numpy array of shape %s, got %s" % (expected.shape, _show(actual)))
            self._check_array(expected, actual, where, path)
        elif _torch_kind(expected) == "tensor":
            self._check_tensor(expected, actual, where, path, fail, ident)
        elif _torch_kind(expected) == "generator":
            import torch

            if type(actual) is not torch.Generator or not torch.equal(expected.get_state(), actual.get_state()):
                fail("expected a torch.Generator in the recorded state, got %s" % _show(actual))
        elif _top_module(expected) == "pandas":
            self._check_pandas(expected, actual, where, path, fail)
        elif type(expected) in (list, tuple):
            if type(actual) is not type(expected):
                fail("expected a %s of %d, got %s" % (type(expected).__name__, len(expected), _show(actual)))
            if len(actual) != len(expected):
                fail("expected %d items, got %d: %s" % (len(expected), len(actual), _show(actual)))
            for i, (e, a) in enumerate(zip(expected, actual)):
                self._match(e, a, where, "%s[%d]" % (path, i), ident)
        elif isinstance(expected, dict):
            self._check_dict(expected, actual, where, path, fail, ident)
        elif type(expected) is Instance:
            if type(actual) is not Instance or actual.type_name != expected.type_name:
                fail("expected a %s, got %s" % (expected.class_name, _show(actual)))
            names = list(expected.attrs) if expected.kind != "object" else sorted(expected.attrs)
            for name in names:
                self._match(expected.attrs[name], actual.attrs.get(name, _MISSING), where, "%s.%s" % (path, name), ident)
        elif type(actual) is not type(expected) or actual != expected:
            differ()

    def _check_dict(self, expected, actual, where, path, fail, ident):
        """Keys by value; keys that are objects (tensors) by identity: the actual object bound to
        the expected one elsewhere (a Parameter in param_groups), else the key at the same position."""
        __tracebackhide__ = True
        if not isinstance(actual, dict) or type(actual) is not type(expected):
            fail("expected a %s, got %s" % (type(expected).__name__, _show(actual)))
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
        e = expected.item() if _is_np_generic(expected) else expected
        a = actual.item() if _is_np_generic(actual) else actual
        if type(e) is bool or type(a) is bool:
            if type(e) is not type(a) or a != e:
                differ()
        elif type(e) is int:
            if type(a) is not int or a != e:
                differ()
        elif type(e) is complex or type(a) is complex:
            e, a = complex(e), complex(a)
            if not (self._close(e.real, a.real) and self._close(e.imag, a.imag)):
                differ()
        elif not self._close(float(e), float(a)):
            differ()

    def _close(self, expected, actual):
        """math.isclose(actual, expected, rel_tol=rtol, abs_tol=atol), with nan equal to nan."""
        if expected == actual:
            return True
        if expected != expected or actual != actual:
            return expected != expected and actual != actual
        if expected in (_INF, -_INF) or actual in (_INF, -_INF):
            return False
        diff = abs(expected - actual)
        return diff <= max(self.rtol * max(abs(expected), abs(actual)), self.atol)

    def _check_array(self, expected, actual, where, path, check_dtype=True):
        __tracebackhide__ = True
        import numpy as np

        at = "%s %s" % (where, path) if path else where
        if expected.shape != actual.shape:
            raise AssertionError("%s: expected shape %s, got shape %s" % (at, expected.shape, actual.shape))
        if check_dtype and expected.dtype != actual.dtype:
            raise AssertionError("%s: expected dtype %s, got dtype %s" % (at, expected.dtype, actual.dtype))
        if expected.dtype.kind == "O" or actual.dtype.kind == "O":
            # objects (a data frame's string column): each compared as the value it is
            for idx in np.ndindex(*expected.shape):
                shown = "".join("[%d]" % i for i in idx)
                self._match(expected[idx], actual[idx], where, path + shown, None)
            return
        if expected.dtype.kind in "fc":
            with np.errstate(invalid="ignore", over="ignore"):
                finite = ~np.isinf(expected) & ~np.isinf(actual)
                near = np.absolute(expected - actual) <= self.atol + self.rtol * np.absolute(expected)
                ok = (expected == actual) | (np.isnan(expected) & np.isnan(actual)) | (finite & near)
        else:
            ok = expected == actual
        bad = (~np.asarray(ok)).reshape(-1).nonzero()[0]
        if len(bad):
            first = int(bad[0])
            raise AssertionError(
                "%s: at index %s: expected %r, got %r (%d of %d elements differ; rtol %g, atol %g)"
                % (at, np.unravel_index(first, expected.shape) if expected.shape else (), expected.reshape(-1)[first].item(),
                   actual.reshape(-1)[first].item(), len(bad), expected.size, self.rtol, self.atol)
            )

    def _check_tensor(self, expected, actual, where, path, fail, ident):
        """Shape, dtype, values, then what a training step relies on: Parameter or not,
        requires_grad, and .grad (compared like a tensor)."""
        __tracebackhide__ = True
        import torch

        if type(actual) not in (torch.Tensor, torch.nn.Parameter):
            fail("expected a tensor of shape %s, got %s" % (tuple(expected.shape), _show(actual)))
        if tuple(actual.shape) != tuple(expected.shape):
            fail("expected shape %s, got shape %s" % (tuple(expected.shape), tuple(actual.shape)))
        if actual.dtype != expected.dtype:
            fail("expected dtype %s, got dtype %s" % (expected.dtype, actual.dtype))
        self._check_array(_tensor_values(expected), _tensor_values(actual), where, path, check_dtype=False)
        if type(expected) is torch.nn.Parameter and type(actual) is not torch.nn.Parameter:
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


# ---------------------------------------------------------------------- helpers


def _payload(fn, what):
    if isinstance(fn, oracle.Probe):
        fn = fn.function
    if not ship.is_helper(fn):
        raise ship.ProbeError("%s must be a @probe_helper function: it runs in the candidate" % what)
    load = ship.payload(fn, "%s %s" % (what, fn.__name__))
    import hashlib

    key = hashlib.sha256(json.dumps(load, sort_keys=True).encode("utf-8")).hexdigest()[:32]
    return {"name": fn.__name__, "defs": load["defs"], "imports": load["imports"], "key": key}


def _array_keys(tree, out=None):
    out = set() if out is None else out
    if isinstance(tree, list):
        for v in tree:
            _array_keys(v, out)
    elif isinstance(tree, dict):
        if tree.get(codec.TAG) in ("ndarray", "tensor") and isinstance(tree.get("key"), str):
            out.add(tree["key"])
        for v in tree.values():
            _array_keys(v, out)
    return out


def _same_builtin(want, mro):
    """A recorded builtin exception class matches the same builtin in the candidate's MRO."""
    return want.startswith("builtins:") and want in mro


def _is_number(x):
    if _is_np_generic(x):
        return x.dtype.kind in "biufc"
    return type(x) in (int, float, complex, bool)


def _is_np_generic(x):
    return _top_module(x) == "numpy" and not _is_ndarray(x) and hasattr(x, "dtype")


def _is_ndarray(x):
    if _top_module(x) != "numpy":
        return False
    import numpy as np

    return type(x) is np.ndarray


def _tensor_values(t):
    import torch

    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.resolve_conj().numpy() if t.is_complex() else t.numpy()


def _top_module(x):
    return type(x).__module__.split(".")[0]


def _torch_kind(x):
    if _top_module(x) != "torch":
        return None
    import torch

    return "tensor" if isinstance(x, torch.Tensor) else "generator" if isinstance(x, torch.Generator) else None


def _tracked(x):
    """Values whose identity a recording keeps (codec.is_tracked, on decoded values)."""
    if type(x) in (list, dict, set, bytearray) or isinstance(x, dict):
        return True
    if x is None or type(x) in (str, bytes, int, float, complex, bool, tuple, frozenset) or type(x) is EnumMember:
        return False
    if type(x) is Instance:
        return True
    if _is_ndarray(x):
        return True
    if _top_module(x) == "torch":
        import torch

        return isinstance(x, (torch.Tensor, torch.Generator))
    return False


def _show_keys(keys):
    return "[%s]" % ", ".join(_show(k) for k in keys)


def _show(x):
    if _is_ndarray(x) and x.size > 8:
        return "array(shape=%s, dtype=%s)" % (x.shape, x.dtype)
    try:
        text = repr(x)
    except Exception:
        text = "<%s>" % type(x).__name__
    return text if len(text) <= 200 else text[:190] + "...(%d chars)" % len(text)
