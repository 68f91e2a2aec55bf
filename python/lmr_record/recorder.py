"""Recording wrappers: put a wrapper in place of each target that captures its calls.

A target is a module function, a class attribute (`Class.method`, including static
methods, class methods, properties and async methods) or a whole class (every
function defined in its body). The wrapper keeps the original's kind (a generator
function's wrapper is a generator that passes every item on), calls it, and hands
what it sees to capture.Capture, which encodes it (see there).
"""
import functools
import inspect
import sys

from . import codec, encode
from .capture import Capture, RecordError


class Entry:
    """One recorded callable: where it came from, how to call it again, and its calls."""

    def __init__(self, spec, module, owner_path, name, kind, func):
        self.spec = spec
        self.module = module
        self.owner_path = owner_path
        self.name = name
        self.kind = kind
        self.func = func
        self.is_async = inspect.iscoroutinefunction(func)
        self.is_generator = inspect.isgeneratorfunction(func)
        self.signature = inspect.signature(func)
        self.seen = 0
        self.calls = []

    @property
    def symbol(self):
        return ".".join(p for p in (self.owner_path, self.name) if p)

    def to_json(self):
        rec = self.spec
        out = {
            "file": rec["file"],
            "symbol": self.symbol,
            "module": self.module,
            "owner": self.owner_path or None,
            "name": self.name,
            "kind": self.kind,
            "async": self.is_async,
            "max_calls": rec["max_calls"],
            "calls_seen": self.seen,
            "calls_recorded": len(self.calls),
            "self_attrs": rec.get("self_attrs"),
            "skip_args": rec.get("skip_args") or [],
            "calls": self.calls,
        }
        if self.is_generator:
            out["generator"] = True  # only then, so recordings without generators keep their bytes
        return out


class Recorder:
    def __init__(self, allow_object):
        self.encoder = encode.Encoder(allow_object)
        self.capture = Capture(self, allow_object)
        self.entries = []
        self.error = None
        # Names other modules bound with `from m import f` before the wrapper existed.
        self._rebound = []

    # --------------------------------------------------------------------- installing

    def install(self, spec):
        module_name = module_of(spec["file"])
        try:
            module = __import__(module_name, fromlist=["_"])
        except Exception as e:
            raise RecordError(
                "record/import-failed",
                "cannot import %s (from %s): %s: %s" % (module_name, spec["file"], type(e).__name__, e),
                "the reference must import from the workspace root; check the target's file and its imports",
                spec["pointer"] + "/file",
            )
        parts = spec["symbol"].split(".")
        owner = module
        for i, part in enumerate(parts[:-1]):
            nxt = getattr(owner, part, None)
            if not isinstance(nxt, type):
                raise RecordError(
                    "record/target-unsupported",
                    "%s: %s is %s, so %s cannot be replaced from outside"
                    % (spec["file"], ".".join(parts[: i + 1]), "missing" if nxt is None else "not a class", spec["symbol"]),
                    "record module functions, Class.method or Class; nested functions cannot be recorded",
                    spec["pointer"] + "/symbol",
                )
            owner = nxt
        name = parts[-1]
        raw = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if raw is None:
            raise RecordError(
                "record/target-missing",
                "%s has no %s after import" % (spec["file"], spec["symbol"]),
                "check the target's symbol",
                spec["pointer"] + "/symbol",
            )
        owner_path = ".".join(parts[:-1])
        if isinstance(raw, type):
            members = [(n, v) for n, v in vars(raw).items() if _member_kind(v)]
            if not members:
                raise RecordError("record/target-unsupported", "class %s defines no methods to record" % spec["symbol"], "", spec["pointer"])
            for n, v in members:
                self._wrap(spec, module_name, raw, spec["symbol"], n, v)
        else:
            self._wrap(spec, module_name, owner, owner_path, name, raw)

    def _wrap(self, spec, module_name, owner, owner_path, name, raw):
        kind = _member_kind(raw) if isinstance(owner, type) else ("function" if inspect.isfunction(raw) else None)
        if kind is None:
            raise RecordError(
                "record/target-unsupported",
                "%s.%s is a %s, not a function" % (owner_path or module_name, name, codec.type_name(raw)),
                "record plain functions, methods, static/class methods and properties",
                spec["pointer"] + "/symbol",
            )
        func = raw.fget if kind == "property" else getattr(raw, "__func__", raw)
        if inspect.isasyncgenfunction(func):
            raise RecordError(
                "record/target-unsupported",
                "%s is an async generator function; lmr records functions, coroutines and generators" % ".".join(p for p in (owner_path, name) if p),
                "wrap it in an async function that returns [x async for x in ...] and make that the target",
                spec["pointer"] + "/symbol",
            )
        entry = Entry(spec, module_name, owner_path, name, kind, func)
        self.entries.append(entry)
        wrapper = self._make_wrapper(entry, func)
        if kind == "staticmethod":
            new = staticmethod(wrapper)
        elif kind == "classmethod":
            new = classmethod(wrapper)
        elif kind == "property":
            new = property(wrapper, raw.fset, raw.fdel, raw.__doc__)
        else:
            new = wrapper
        setattr(owner, name, new)
        if kind == "function":
            self._rebind_imports(func, wrapper)

    def _rebind_imports(self, original, wrapper):
        for mod in list(sys.modules.values()):
            d = getattr(mod, "__dict__", None)
            if not isinstance(d, dict):
                continue
            for k, v in list(d.items()):
                if v is original:
                    d[k] = wrapper

    def _make_wrapper(self, entry, func):
        capture = self.capture
        if entry.is_generator:
            return self._make_generator_wrapper(entry, func)
        if entry.is_async:

            @functools.wraps(func)
            async def async_wrapper(*args, **kwargs):
                call = capture.begin(entry, args, kwargs)
                if call is None:
                    return await func(*args, **kwargs)
                try:
                    result = await func(*args, **kwargs)
                except Exception as e:
                    capture.end(entry, call, args, kwargs, exc=e)
                    raise
                capture.end(entry, call, args, kwargs, result=result)
                return result

            return async_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            call = capture.begin(entry, args, kwargs)
            if call is None:
                return func(*args, **kwargs)
            try:
                result = func(*args, **kwargs)
            except Exception as e:
                capture.end(entry, call, args, kwargs, exc=e)
                raise
            capture.end(entry, call, args, kwargs, result=result)
            return result

        return wrapper

    def _make_generator_wrapper(self, entry, func):
        """A generator that records each item the target yields, then how it ended.

        The arguments are taken when iteration starts (when the target's body first
        sees them). Closing it early (a `break` in the driver) is recorded as such, and
        the replay stops after as many items. A value sent in with .send() cannot be
        replayed, so it stops the recording.
        """
        capture = self.capture

        @functools.wraps(func)
        def generator_wrapper(*args, **kwargs):
            call = capture.begin(entry, args, kwargs)
            if call is None:
                return (yield from func(*args, **kwargs))
            inner = func(*args, **kwargs)
            while True:
                capture.resume(call)
                try:
                    item = next(inner)
                except StopIteration as stop:
                    capture.end(entry, call, args, kwargs, result=stop.value)
                    return stop.value
                except Exception as e:
                    capture.end(entry, call, args, kwargs, exc=e)
                    raise
                capture.pause(entry, call, item)
                try:
                    sent = yield item
                except GeneratorExit:
                    inner.close()
                    capture.end(entry, call, args, kwargs, closed=True)
                    raise
                except BaseException as thrown:  # .throw() by the driver: not replayable either
                    capture.refuse_thrown(entry, call, thrown)
                    raise
                if sent is not None:
                    capture.refuse_sent(entry, call, sent)

        return generator_wrapper


def module_of(file):
    """`core/mcts.py` -> `core.mcts`; `pkg/__init__.py` -> `pkg`."""
    mod = file[:-3] if file.endswith(".py") else file
    parts = mod.split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def _member_kind(v):
    if isinstance(v, staticmethod):
        return "staticmethod"
    if isinstance(v, classmethod):
        return "classmethod"
    if isinstance(v, property):
        return "property" if v.fget is not None else None
    if inspect.isfunction(v):
        return "method"
    return None
