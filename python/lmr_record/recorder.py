"""Recording wrappers: put a wrapper in place of each target that captures its calls.

A target is a module function, a class attribute (`Class.method`, including static
methods, class methods, properties and async methods) or a whole class (every
function defined in its body). The wrapper keeps the original's kind, calls it, and
encodes the arguments before the call, the return value (or the exception) right
after it, the arguments the call changed in place and the instance's attributes.
"""
import functools
import inspect
import sys

from . import codec


class RecordError(Exception):
    """Stops a recording; `code`, `message` and `hint` go back to lmr as they are."""

    def __init__(self, code, message, hint="", pointer=""):
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.pointer = pointer


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
        self.signature = inspect.signature(func)
        self.seen = 0
        self.calls = []

    @property
    def symbol(self):
        return ".".join(p for p in (self.owner_path, self.name) if p)

    def to_json(self):
        rec = self.spec
        return {
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


class Recorder:
    def __init__(self, allow_object):
        self.encoder = codec.Encoder(allow_object)
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
                "record-import-failed",
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
                    "record-target-unsupported",
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
                "record-target-missing",
                "%s has no %s after import" % (spec["file"], spec["symbol"]),
                "check the target's symbol",
                spec["pointer"] + "/symbol",
            )
        owner_path = ".".join(parts[:-1])
        if isinstance(raw, type):
            members = [(n, v) for n, v in vars(raw).items() if _member_kind(v)]
            if not members:
                raise RecordError("record-target-unsupported", "class %s defines no methods to record" % spec["symbol"], "", spec["pointer"])
            for n, v in members:
                self._wrap(spec, module_name, raw, spec["symbol"], n, v)
        else:
            self._wrap(spec, module_name, owner, owner_path, name, raw)

    def _wrap(self, spec, module_name, owner, owner_path, name, raw):
        kind = _member_kind(raw) if isinstance(owner, type) else ("function" if inspect.isfunction(raw) else None)
        if kind is None:
            raise RecordError(
                "record-target-unsupported",
                "%s.%s is a %s, not a function" % (owner_path or module_name, name, codec.type_name(raw)),
                "record plain functions, methods, static/class methods and properties",
                spec["pointer"] + "/symbol",
            )
        func = raw.fget if kind == "property" else getattr(raw, "__func__", raw)
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise RecordError(
                "record-target-unsupported",
                "%s is a generator function; its results cannot be replayed" % ".".join(p for p in (owner_path, name) if p),
                "wrap it in a function that returns list(...) and make that the target",
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
        recorder = self
        if entry.is_async:

            @functools.wraps(func)
            async def async_wrapper(*args, **kwargs):
                call = recorder._begin(entry, args, kwargs)
                if call is None:
                    return await func(*args, **kwargs)
                try:
                    result = await func(*args, **kwargs)
                except Exception as e:
                    recorder._end(entry, call, args, kwargs, exc=e)
                    raise
                recorder._end(entry, call, args, kwargs, result=result)
                return result

            return async_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            call = recorder._begin(entry, args, kwargs)
            if call is None:
                return func(*args, **kwargs)
            try:
                result = func(*args, **kwargs)
            except Exception as e:
                recorder._end(entry, call, args, kwargs, exc=e)
                raise
            recorder._end(entry, call, args, kwargs, result=result)
            return result

        return wrapper

    # --------------------------------------------------------------------- recording

    def _begin(self, entry, args, kwargs):
        entry.seen += 1
        has_self = entry.kind in ("method", "property", "classmethod")
        if self.error is not None or len(entry.calls) >= entry.spec["max_calls"] or (has_self and not args):
            # (a method called without its instance: let the original raise its TypeError)
            return None
        index = len(entry.calls)
        call = {"index": index}
        entry.calls.append(call)
        names = positional_names(entry.signature, len(args))
        first = 1 if has_self else 0
        call["arg_names"] = names[first:]
        skip = set(entry.spec.get("skip_args") or [])
        call["args"] = [self._arg(entry, call, names[i], args[i], skip) for i in range(first, len(args))]
        call["kwargs"] = {k: self._arg(entry, call, k, v, skip) for k, v in kwargs.items()}
        if entry.kind in ("method", "property"):
            call["self"] = {"before": self._self_state(entry, call, args[0], "before")}
        return call

    def _end(self, entry, call, args, kwargs, result=None, exc=None):
        if self.error is not None:
            return
        try:
            if exc is not None:
                call["raises"] = {"type": codec.type_ref(type(exc)) or codec.type_name(exc), "message": str(exc)[:2000]}
            else:
                call["result"] = self._encode(entry, call, result, "return value", "")
            first = 1 if entry.kind in ("method", "property", "classmethod") else 0
            skip = set(entry.spec.get("skip_args") or [])
            mutated_args, mutated_kwargs = {}, {}
            for i, value in enumerate(args[first:]):
                name = call["arg_names"][i]
                if name not in skip and not isinstance(value, codec._SIMPLE):
                    after = self._encode(entry, call, value, "argument %r after the call" % name, "")
                    if after != call["args"][i]:
                        mutated_args[str(i)] = after
            for k, value in kwargs.items():
                if k not in skip and not isinstance(value, codec._SIMPLE):
                    after = self._encode(entry, call, value, "argument %r after the call" % k, "")
                    if after != call["kwargs"][k]:
                        mutated_kwargs[k] = after
            if mutated_args or mutated_kwargs:
                call["mutated"] = {"args": mutated_args, "kwargs": mutated_kwargs}
            if "self" in call:
                call["self"]["after"] = self._self_state(entry, call, args[0], "after")
        except RecordError as e:
            self.error = e
            raise

    def _arg(self, entry, call, name, value, skip):
        if name in skip:
            param = entry.signature.parameters.get(name)
            has_default = param is not None and param.default is not inspect.Parameter.empty
            return {codec.TAG: "skipped", "type": codec.type_name(value), "has_default": has_default}
        return self._encode(entry, call, value, "argument %r" % name, "")

    def _self_state(self, entry, call, obj, when):
        listed = entry.spec.get("self_attrs")
        if listed is None:
            state = getattr(obj, "__dict__", None)
            names = sorted(state) if isinstance(state, dict) else []
            if when == "after":
                names = sorted(set(names) | set(call["self"]["before"]))
        else:
            names = listed
        out = {}
        for attr in names:
            try:
                value = getattr(obj, attr)
            except AttributeError:
                continue
            out[attr] = self._encode(entry, call, value, "self.%s %s the call" % (attr, when), "")
        return out

    def _encode(self, entry, call, value, what, path):
        try:
            return self.encoder.encode(value, path)
        except codec.Unsupported as e:
            where = "%s%s" % (what, (" " + e.path) if e.path else "")
            hint = "make the target return plain data (see python/lmr_record/README.md for what lmr stores)"
            if what.startswith("argument"):
                hint = "list it in %s/record/skip_args or convert it in the driver" % entry.spec["pointer"]
            elif what.startswith("self."):
                hint = "list the attributes the method reads in %s/record/self_attrs" % entry.spec["pointer"]
            err = RecordError(
                "record-unserialisable",
                "call %d of %s: %s has type %s, which lmr cannot record%s"
                % (call["index"], entry.symbol, where, e.type_name, " (%s)" % e.reason if e.reason else ""),
                hint,
                entry.spec["pointer"],
            )
            self.error = err
            raise err from None


def module_of(file):
    """`core/mcts.py` -> `core.mcts`; `pkg/__init__.py` -> `pkg`."""
    mod = file[:-3] if file.endswith(".py") else file
    parts = mod.split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def positional_names(sig, n):
    """Parameter names of the first n positional arguments (`*args[i]` for extras)."""
    names = []
    var = None
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            var = p.name
    out = names[:n]
    for i in range(len(out), n):
        out.append("*%s[%d]" % (var or "args", i - len(names)))
    return out


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
