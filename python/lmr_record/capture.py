"""What one recorded call keeps: the wrappers in recorder.py call begin() and end().

Before the call: the arguments and `self` (its __dict__ and __slots__, or
record.self_attrs), encoded as one group, so an object met twice (a Parameter in an
optimizer's param_groups and as a key of its state) is one object again in the replay.
After it: the result (or the exception), for a generator every item it yielded, the
arguments it changed in place and `self` again, as a second group in which Parameters
that were there before are marked as such (the replay checks they were updated in place).
Identity that did not matter to the call (an object met twice that it neither changed
nor looked up by identity) is written out in full again, so recordings of pure
functions are what they were before lmr tracked identity. Random-number states go in
"rng" for calls that drew random numbers (rng.py). A value the codec cannot store stops
the recording with a RecordError naming the call, the argument or attribute, and its type.
"""
import inspect

from . import codec, encode, rng
from .group import canonical


class RecordError(Exception):
    """Stops a recording; `code`, `message` and `hint` go back to lmr as they are."""

    def __init__(self, code, message, hint="", pointer=""):
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.pointer = pointer


class CallState:
    """A call being recorded: its entry in calls.json and what end() needs from begin()."""

    def __init__(self, call):
        self.call = call
        self.slots = []  # where each tree of the `before` group goes: ("args", i) / ("kwargs", k) / ("self", attr)
        self.before = None
        self.rng_start = None
        self.rng_now = None
        self.rng_last = None
        self.consumed = set()
        self.interleaved = False
        self.started = False


class Capture:
    def __init__(self, recorder, allow_object):
        self.recorder = recorder
        self.allow_object = allow_object

    # ------------------------------------------------------------------- the call

    def begin(self, entry, args, kwargs):
        entry.seen += 1
        has_self = entry.kind in ("method", "property", "classmethod")
        if self.recorder.error is not None or len(entry.calls) >= entry.spec["max_calls"] or (has_self and not args):
            # (a method called without its instance: let the original raise its TypeError)
            return None
        call = {"index": len(entry.calls)}
        entry.calls.append(call)
        state = CallState(call)
        names = positional_names(entry.signature, len(args))
        first = 1 if has_self else 0
        call["arg_names"] = names[first:]
        skip = set(entry.spec.get("skip_args") or [])
        items = []
        call["args"] = []
        for i in range(first, len(args)):
            call["args"].append(self._skipped(entry, names[i], args[i]) if names[i] in skip else None)
            if names[i] not in skip:
                items.append((args[i], "", "argument %r" % names[i]))
                state.slots.append(("args", i - first))
        call["kwargs"] = {}
        for k, v in kwargs.items():
            call["kwargs"][k] = self._skipped(entry, k, v) if k in skip else None
            if k not in skip:
                items.append((v, "", "argument %r" % k))
                state.slots.append(("kwargs", k))
        if entry.kind in ("method", "property"):
            call["self"] = {"before": {}}
            for attr, value in self_values(entry, args[0], None):
                items.append((value, "", "self.%s before the call" % attr))
                state.slots.append(("self", attr))
        state.before = self._group(entry, call, items)
        _place(call, state.slots, state.before.trees, "before")
        state.rng_start = rng.capture()
        return state

    def resume(self, state):
        """A generator call is about to run up to its next item."""
        now = rng.capture()
        if not state.started:
            state.started, state.rng_start = True, now
        elif state.rng_last is not None and rng.changed(state.rng_last, now):
            state.interleaved = True
        state.rng_now = now

    def pause(self, entry, state, item):
        """A generator call yielded `item`: kept as it is now, before the driver can change it."""
        if self.recorder.error is not None:
            return
        state.consumed.update(rng.changed(state.rng_now, rng.capture()))
        state.rng_last = rng.capture()
        items = state.call.setdefault("yields", [])
        items.append(self._group(entry, state.call, [(item, "", "item %d" % len(items))]).trees[0])

    def end(self, entry, state, args, kwargs, result=None, exc=None, closed=False):
        if self.recorder.error is not None:
            return
        call = state.call
        try:
            self._end_rng(entry, state)
            if exc is not None:
                call["raises"] = {"type": codec.type_ref(type(exc)) or codec.type_name(exc), "message": str(exc)[:2000]}
            elif closed:
                call["closed"] = True
            else:
                call["result"] = self._group(entry, call, [(result, "", "return value")]).trees[0]
            scratch = encode.Encoder(self.allow_object)
            self._keep_identity_that_mattered(state, scratch)
            self._after(entry, state, args, kwargs, scratch)
        except RecordError as e:
            self.recorder.error = e
            raise

    def refuse_sent(self, entry, state, sent):
        self._stop(RecordError(
            "record/unreplayable",
            "call %d of %s: the driver sent a value (%s) into the generator with .send(); a replay drives it with next() only"
            % (state.call["index"], entry.symbol, codec.type_name(sent)),
            "iterate the generator with for or next() in the driver",
            entry.spec["pointer"],
        ))

    def refuse_thrown(self, entry, state, exc):
        if self.recorder.error is None:
            self.recorder.error = RecordError(
                "record/unreplayable",
                "call %d of %s: the driver threw %s into the generator with .throw(); a replay cannot do the same"
                % (state.call["index"], entry.symbol, codec.type_name(exc)),
                "iterate the generator with for or next() in the driver",
                entry.spec["pointer"],
            )

    # ------------------------------------------------------------------- parts

    def _end_rng(self, entry, state):
        if not entry.is_generator:
            state.consumed.update(rng.changed(state.rng_start, rng.capture()))
        elif state.rng_now is not None:
            state.consumed.update(rng.changed(state.rng_now, rng.capture()))
        if not state.consumed:
            return
        if state.interleaved:
            self._stop(RecordError(
                "record/unreplayable",
                "call %d of %s: the generator draws random numbers (%s), and the driver drew some between its items, which a replay cannot repeat"
                % (state.call["index"], entry.symbol, ", ".join(sorted(state.consumed))),
                "consume it in one go (list(...)) in the driver, or draw the driver's own numbers from a random.Random or torch.Generator of its own",
                entry.spec["pointer"],
            ))
        try:
            state.call["rng"] = rng.encode(self.recorder.encoder, state.rng_start, sorted(state.consumed))
        except encode.Unsupported as e:
            e.what = "the random-number state"
            self._stop(self._unsupported(entry, state.call, e))

    def _keep_identity_that_mattered(self, state, scratch):
        before = state.before
        was = {label: canonical(node, before.defs) for label, node in before.defs.items()}

        def keep(label, obj):
            if id(obj) in before.key_ids:
                return True  # found by identity (a dict key): must stay the same object
            try:
                return canonical(scratch.encode(obj)) != was[label]
            except encode.Unsupported:
                return True  # it changed into something the after-group will report

        before.strip(keep)
        _place(state.call, state.slots, before.trees, "before")

    def _after(self, entry, state, args, kwargs, scratch):
        call = state.call
        before = {slot: canonical(tree, state.before.defs) for slot, tree in zip(state.slots, state.before.trees)}
        first = 1 if entry.kind in ("method", "property", "classmethod") else 0
        skip = set(entry.spec.get("skip_args") or [])
        items, slots = [], []
        for i, value in enumerate(args[first:]):
            name = call["arg_names"][i]
            if name not in skip and not isinstance(value, encode._SIMPLE):
                what = "argument %r after the call" % name
                if canonical(self._alone(entry, call, scratch, value, what)) != before[("args", i)]:
                    items.append((value, "", what, True))
                    slots.append(("args", str(i)))
        for k, value in kwargs.items():
            if k not in skip and not isinstance(value, encode._SIMPLE):
                what = "argument %r after the call" % k
                if canonical(self._alone(entry, call, scratch, value, what)) != before[("kwargs", k)]:
                    items.append((value, "", what, True))
                    slots.append(("kwargs", k))
        if "self" in call:
            for attr, value in self_values(entry, args[0], call["self"]["before"]):
                items.append((value, "", "self.%s after the call" % attr))
                slots.append(("self", attr))
        group = self._group(entry, call, items, before=state.before)
        mutated = {"args": {}, "kwargs": {}}
        for (where, key), tree in zip(slots, group.trees):
            if where == "self":
                call["self"].setdefault("after", {})[key] = tree
            else:
                mutated[where][key] = tree
        if "self" in call:
            call["self"].setdefault("after", {})
        if mutated["args"] or mutated["kwargs"]:
            call["mutated"] = mutated

    def _skipped(self, entry, name, value):
        param = entry.signature.parameters.get(name)
        has_default = param is not None and param.default is not inspect.Parameter.empty
        return {codec.TAG: "skipped", "type": codec.type_name(value), "has_default": has_default}

    def _alone(self, entry, call, encoder, value, what):
        try:
            return encoder.encode(value)
        except encode.Unsupported as e:
            e.what = what
            self._stop(self._unsupported(entry, call, e))

    def _group(self, entry, call, items, before=None):
        try:
            return self.recorder.encoder.encode_group(items, before)
        except encode.Unsupported as e:
            self._stop(self._unsupported(entry, call, e))

    def _stop(self, err):
        self.recorder.error = err
        raise err from None

    def _unsupported(self, entry, call, e):
        what = e.what or "a value"
        where = "%s%s" % (what, (" " + e.path) if e.path else "")
        hint = "make the target return plain data (see python/lmr_record/README.md for what lmr stores)"
        if what.startswith("argument"):
            hint = "list it in %s/record/skip_args or convert it in the driver" % entry.spec["pointer"]
        elif what.startswith("self."):
            hint = "list the attributes the method reads in %s/record/self_attrs" % entry.spec["pointer"]
        return RecordError(
            "record/unserialisable",
            "call %d of %s: %s has type %s, which lmr cannot record%s"
            % (call["index"], entry.symbol, where, e.type_name, " (%s)" % e.reason if e.reason else ""),
            hint,
            entry.spec["pointer"],
        )


def _place(call, slots, trees, when):
    for (where, key), tree in zip(slots, trees):
        if where == "args":
            call["args"][key] = tree
        elif where == "kwargs":
            call["kwargs"][key] = tree
        else:
            call["self"][when][key] = tree


def self_values(entry, obj, before):
    """(attribute, value) of `self` to record: record.self_attrs, else its __dict__ and __slots__
    (after the call, also those it had before)."""
    listed = entry.spec.get("self_attrs")
    if listed is None:
        state = getattr(obj, "__dict__", None)
        names = set(state) if isinstance(state, dict) else set()
        names.update(n for n in codec.slot_names(type(obj)) if hasattr(obj, n))
        names.update(before or ())
        listed = sorted(names)
    for attr in listed:
        try:
            value = getattr(obj, attr)
        except AttributeError:
            continue
        yield attr, value


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
