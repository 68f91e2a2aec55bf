"""The candidate's half of a replay: make a recorded call on the code under test and send
back what it did, encoded as the recorder encodes it. The oracle (replay.py) holds the
recorded answers and compares; this side gets only the call's inputs.

The request: {"target": {module, owner, name, kind, async, generator, symbol}, "call":
{arg_names, args, kwargs, self_before, rng}, "want": {"args": [...], "kwargs": [...],
"self": [...]}, "generator": {"items": N, "end": "raise" | "closed" | "stop"} (generator
targets), "wrap": a probe payload (a test's wrapper around the call) or None, "supply":
a probe payload for arguments the recording left out, or None}.

The reply's "replay": {"result": TREE | "raised": {...}, "items": [TREE...], "end": {...} (generators),
"after": {"args": {...}, "kwargs": {...}, "self": {...}}, "missing_self": [...]}. A
Parameter (or leaf tensor that requires grad) in "after" that is the very object the call
was given, where the recording labels that object, carries "was": the recording's label.
"""
import asyncio
import base64
import inspect
import random
import struct

from lmr_record import codec, encode

_MISSING = object()


def replay_call(worker, doc, arrays):
    t = doc["target"]
    c = doc["call"]
    want = doc.get("want") or {}
    kind, name = t["kind"], t["name"]
    module = worker.import_module(t["module"])
    if t.get("owner"):
        owner = module
        for part in t["owner"].split("."):
            owner = getattr(owner, part)
        implementation = owner
    else:
        implementation = getattr(module, name)
    function = implementation if kind == "function" else inspect.getattr_static(implementation, name)
    function = getattr(function, "fget", None) or getattr(function, "__func__", function)

    kw_names = list(c.get("kwargs") or {})
    self_before = c.get("self_before") or {}
    attrs = list(self_before) if kind in ("method", "property") else []
    trees = list(c.get("args") or []) + [c["kwargs"][k] for k in kw_names] + [self_before[a] for a in attrs]
    decoder = codec.Decoder(arrays)
    values = decoder.decode_all(trees)
    # the recording's own label of each object the call is given that it labels: after the
    # call, an object that is still that very object says so with the recording's label
    recorded_label = {id(obj): label for label, obj in decoder.objects.items()}
    n = len(c.get("args") or [])
    supply = worker.namespace(doc["supply"])[doc["supply"]["name"]] if doc.get("supply") else None

    def argument(param, value):
        if not isinstance(value, codec.Skipped):
            return value
        if supply is not None:
            return supply(t.get("symbol"), param, value.type_name)
        p = inspect.signature(function).parameters.get(param)
        if p is not None and p.default is not inspect.Parameter.empty:
            return p.default
        raise LookupError("argument %r of %s (%s) was not recorded and has no default: the test file must supply one" % (param, t.get("symbol"), value.type_name))

    arg_names = c.get("arg_names") or []
    args = [argument(p, v) for p, v in zip(arg_names, values[:n])]
    kwargs = {k: argument(k, v) for k, v in zip(kw_names, values[n:n + len(kw_names)])}
    instance = None
    if kind in ("method", "property"):
        instance = codec.restore_instance(implementation, dict(zip(attrs, values[n + len(kw_names):])))

    enc = encode.Encoder(worker.allow)

    if "rng" in c:
        _set_rng(c["rng"], arrays)
    wrap = worker.namespace(doc["wrap"])[doc["wrap"]["name"]] if doc.get("wrap") else None

    def run():
        if kind == "function":
            target, call_args = implementation, args
        elif kind == "property":
            return getattr(instance, name)
        elif kind == "method":
            target, call_args = getattr(instance, name), args
        else:
            target, call_args = getattr(implementation, name), args
        out = wrap(target, *call_args, **kwargs) if wrap is not None else target(*call_args, **kwargs)
        return asyncio.run(out) if t.get("async") else out

    out = {}
    raised = False
    try:
        result = run()
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        out["raised"] = worker.raised(e)
        raised = True
    if not raised:
        if t.get("generator"):
            gen = doc.get("generator") or {}
            items_out, end = _drive(worker, enc, result, int(gen.get("items", 0)), gen.get("end", "stop"))
            out["items"] = items_out
            out["end"] = end
            raised = end.get("kind") == "raised"
        else:
            out["result"] = enc.encode_group([(result, "", "return value")]).trees[0]
    if not raised or t.get("generator"):
        after_items, slots = [], []
        for key in want.get("args") or []:
            i = int(key)
            if i < len(args):
                after_items.append((args[i], "", "argument %r after the call" % arg_names[i], True))
                slots.append(("args", key))
        for key in want.get("kwargs") or []:
            if key in kwargs:
                after_items.append((kwargs[key], "", "argument %r after the call" % key, True))
                slots.append(("kwargs", key))
        missing = []
        for a in want.get("self") or []:
            value = getattr(instance, a, _MISSING) if instance is not None else _MISSING
            if value is _MISSING:
                missing.append(a)
                continue
            after_items.append((value, "", "self.%s after the call" % a))
            slots.append(("self", a))
        group = enc.encode_group(after_items)
        top = {id(tree) for item, tree in zip(after_items, group.trees) if len(item) > 3}
        for obj_id, node in group.param_nodes.items():
            if obj_id in recorded_label and id(node) not in top:
                node["was"] = recorded_label[obj_id]
        after = {"args": {}, "kwargs": {}, "self": {}}
        for (where, key), tree in zip(slots, group.trees):
            after[where][key] = tree
        out["after"] = after
        out["missing_self"] = missing
    return {"replay": out}, enc.arrays


def _drive(worker, enc, gen, n, end):
    """Up to n items of a generator call, then how it ends: what the oracle expects to check."""
    if not hasattr(gen, "__next__"):
        return [], {"kind": "not-iterator", "type": codec.type_name(gen)}
    items = []
    for _ in range(n):
        try:
            item = next(gen)
        except StopIteration as stop:
            return items, {"kind": "stopped-early", "after": len(items), "value": _alone(enc, stop.value)}
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            return items, {"kind": "raised", "after": len(items), "raised": worker.raised(e)}
        items.append(enc.encode_group([(item, "", "item %d" % len(items))]).trees[0])
    if end == "closed":
        close = getattr(gen, "close", None)
        if close is not None:
            close()
        return items, {"kind": "closed"}
    try:
        extra = next(gen)
    except StopIteration as stop:
        return items, {"kind": "stop", "value": _alone(enc, stop.value)}
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return items, {"kind": "raised", "after": len(items), "raised": worker.raised(e)}
    return items, {"kind": "item", "item": _alone(enc, extra)}


def _alone(enc, value):
    return enc.encode_group([(value, "", "value")]).trees[0]


def _set_rng(states, arrays):
    """random, numpy.random and torch in the states the recorded call started from."""
    for lib, state in sorted(states.items()):
        if lib == "random":
            raw = base64.b64decode(state["words"])
            random.setstate((state["version"], struct.unpack("<%dI" % (len(raw) // 4), raw), state["gauss_next"]))
            continue
        value = codec.Decoder(arrays).decode_all([state])[0]
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
