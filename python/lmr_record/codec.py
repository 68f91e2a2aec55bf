"""lmr's recordings, read back: JSON trees plus a table of arrays (.npz) -> Python values.

`lmr build` puts this very file into the bundle's grader beside the replay tests as
_lmr_codec.py, so graders decode fixtures without lmr installed. It therefore imports
only the standard library at import time; numpy, torch and pandas are used only when a
value is one of theirs. Writing recordings is encode.py's job (with group.py for shared
objects), which lmr record uses and the grader never needs.

Trees. None, bool, str and JSON-safe ints and floats are themselves. Everything else is
a tagged object {"__lmr__": KIND, ...}: float (nan, inf), int (beyond 2**53), complex,
bytes, bytearray, tuple, list (only when shared), set, frozenset, dict (non-str keys,
keys not in sorted order, or an OrderedDict/Counter "type"), defaultdict, ndarray,
npscalar, tensor (with "requires_grad", "grad" and "parameter" when they are not the
defaults), torch_dtype, torch_device, torch_size, torch_generator, dataframe, series,
pdvalues (a non-numeric pandas column), dataclass, namedtuple, enum, object (instances
of the recorded code base's classes, and of torch.nn.Module and torch.optim.Optimizer,
by their __dict__), skipped (an argument left out on purpose) and ref.

Identity. Values encoded together (one call's arguments and `self`, say) form a group:
a mutable object met twice in a group (the same Parameter in an optimizer's
param_groups and as a key of its state, the same tensor passed twice) is written once
with "id": N and then as {"__lmr__": "ref", "id": N}; Decoder gives back one object.
"""
import base64
import collections
import importlib
import json

FORMAT = "lmr-calls/1"
TAG = "__lmr__"

class Skipped:
    """Stands in for an argument that was not recorded (record.skip_args)."""

    def __init__(self, type_name, has_default):
        self.type_name = type_name
        self.has_default = has_default

    def __repr__(self):
        return "<argument of type %s, not recorded>" % self.type_name


def type_name(value_or_type):
    cls = value_or_type if isinstance(value_or_type, type) else type(value_or_type)
    return "%s.%s" % (cls.__module__, cls.__qualname__)


def type_ref(cls):
    """`module:Qual.Name` for a class importable by that name, else None."""
    module, qualname = getattr(cls, "__module__", None), getattr(cls, "__qualname__", "")
    if not module or module in ("__main__", "<run_path>") or "<locals>" in qualname:
        return None
    try:
        return "%s:%s" % (module, qualname) if resolve_type("%s:%s" % (module, qualname)) is cls else None
    except Exception:
        return None


def resolve_type(ref):
    module, _, qualname = ref.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


class Recording:
    """A calls.json with its arrays, opened lazily: what the generated tests read."""

    def __init__(self, path):
        import pathlib

        self.path = pathlib.Path(path)
        with open(self.path, encoding="utf-8") as f:
            self.data = json.load(f)
        if self.data.get("format") != FORMAT:
            raise ValueError("%s: format %r is not %r; re-record it with `lmr record`" % (self.path, self.data.get("format"), FORMAT))
        self._arrays = None

    def target(self, file, symbol):
        for t in self.data["targets"]:
            if t["file"] == file and t["symbol"] == symbol:
                return t
        raise KeyError("%s has no recorded calls of %s in %s" % (self.path, symbol, file))

    def arrays(self):
        if self._arrays is None:
            name = self.data.get("arrays")
            if not name:
                self._arrays = {}
            else:
                import numpy as np

                with np.load(self.path.parent / name, allow_pickle=False) as npz:
                    self._arrays = {k: npz[k] for k in npz.files}
        return self._arrays

    def decode(self, tree):
        return decode(tree, self.arrays)

    def decoder(self):
        """A Decoder for one group of trees (they share identity)."""
        return Decoder(self.arrays)


def decode(tree, arrays=None):
    """The value a tree encodes. `arrays` is a dict of arrays, or a function that returns one."""
    return Decoder(arrays).decode_all([tree])[0]


class Decoder:
    """Decodes one group: a label met again (or a ref to it) gives the same object.

    `objects` maps labels to the objects made; `was` maps id(object) to the label, in the
    group before the call, of the object it must be (see Encoder.encode_group).
    """

    def __init__(self, arrays=None):
        self._arrays = arrays
        self._defs = {}
        self.objects = {}
        self.was = {}
        self._alive = []

    def decode_all(self, trees):
        trees = list(trees)
        for t in trees:
            self._index(t)
        return [self.decode(t) for t in trees]

    def _index(self, tree):
        if isinstance(tree, list):
            for v in tree:
                self._index(v)
        elif isinstance(tree, dict):
            if TAG in tree and "id" in tree and tree[TAG] != "ref":
                self._defs[tree["id"]] = tree
            for v in tree.values():
                self._index(v)

    def decode(self, tree):
        if isinstance(tree, list):
            return [self.decode(v) for v in tree]
        if not isinstance(tree, dict):
            return tree
        kind = tree.get(TAG)
        if kind is None:
            return {k: self.decode(v) for k, v in tree.items()}
        if kind == "ref":
            label = tree["id"]
            if label not in self.objects:
                if label not in self._defs:
                    raise ValueError("a recording refers to object %r, which it does not define" % (label,))
                self.decode(self._defs[label])
            return self.objects[label]
        label = tree.get("id")
        if label is not None and label in self.objects:
            return self.objects[label]
        value = self._make(kind, tree)
        if label is not None:
            self.objects[label] = value
        if "was" in tree:
            self.was[id(value)] = tree["was"]
            self._alive.append(value)
        return value

    def _make(self, kind, tree):
        dec = self.decode
        if kind == "float":
            return float(tree["value"])
        if kind == "int":
            return int(tree["value"])
        if kind == "complex":
            return complex(dec(tree["real"]), dec(tree["imag"]))
        if kind in ("bytes", "bytearray"):
            raw = base64.b64decode(tree["base64"])
            return raw if kind == "bytes" else bytearray(raw)
        if kind == "tuple":
            return tuple(dec(v) for v in tree["items"])
        if kind == "list":
            return [dec(v) for v in tree["items"]]
        if kind in ("set", "frozenset"):
            items = [dec(v) for v in tree["items"]]
            return set(items) if kind == "set" else frozenset(items)
        if kind in ("dict", "defaultdict"):
            if kind == "defaultdict":
                factory = tree.get("factory")
                out = collections.defaultdict(resolve_type(factory) if factory else None)
            else:
                out = resolve_type(tree["type"])() if "type" in tree else {}
            for k, v in tree["items"]:
                out[dec(k)] = dec(v)
            return out
        if kind == "ndarray":
            import numpy as np

            return np.array(_table(self._arrays)[tree["key"]])
        if kind == "npscalar":
            import numpy as np

            return np.dtype(tree["dtype"]).type(dec(tree["value"]))
        if kind == "tensor":
            return self._tensor(tree)
        if kind in ("torch_dtype", "torch_device", "torch_size", "torch_generator"):
            return self._torch_value(kind, tree)
        if kind == "dataframe":
            import pandas as pd

            columns = dec(tree["columns"])
            data = {i: self._pd_values(c) for i, c in enumerate(tree["data"])}
            frame = pd.DataFrame(data, index=self._pd_index(tree["index"]))
            frame.columns = pd.Index(columns)
            return frame
        if kind == "series":
            import pandas as pd

            return pd.Series(self._pd_values(tree["values"]), index=self._pd_index(tree["index"]), name=dec(tree["name"]))
        if kind == "enum":
            return getattr(resolve_type(tree["type"]), tree["name"])
        if kind == "namedtuple":
            return resolve_type(tree["type"])(**{k: dec(v) for k, v in tree["fields"].items()})
        if kind in ("dataclass", "object"):
            cls = resolve_type(tree["type"])
            return restore_instance(cls, dec(tree["fields" if kind == "dataclass" else "state"]))
        if kind == "skipped":
            return Skipped(tree["type"], tree["has_default"])
        raise ValueError("unknown tag %r in a recording (written by a newer lmr?)" % (kind,))

    def _tensor(self, tree):
        import torch

        t = torch.from_numpy(_table(self._arrays)[tree["key"]].copy()).to(getattr(torch, tree["dtype"]))
        if tree.get("parameter"):
            t = torch.nn.Parameter(t, requires_grad=bool(tree.get("requires_grad")))
        elif tree.get("requires_grad"):
            t.requires_grad_(True)
        if "grad" in tree:
            t.grad = self.decode(tree["grad"])
        return t

    def _torch_value(self, kind, tree):
        import torch

        if kind == "torch_dtype":
            return getattr(torch, tree["name"])
        if kind == "torch_device":
            return torch.device(tree["name"])
        if kind == "torch_size":
            return torch.Size(tree["items"])
        gen = torch.Generator(device=tree["device"])
        gen.set_state(self.decode(tree["state"]))
        return gen

    def _pd_values(self, tree):
        if not (isinstance(tree, dict) and tree.get(TAG) == "pdvalues"):
            return self.decode(tree)
        items = [self.decode(v) for v in tree["items"]]
        if tree["dtype"] == "object":
            import numpy as np

            out = np.empty(len(items), dtype=object)
            for i, v in enumerate(items):
                out[i] = v
            return out
        import pandas as pd

        return pd.array(items, dtype=tree["dtype"])

    def _pd_index(self, tree):
        import pandas as pd

        return pd.Index(self._pd_values(tree["values"]), name=self.decode(tree["name"]))


def restore_instance(cls, attrs):
    """An instance of `cls` with `attrs` set, without running __init__ (as unpickling does).

    Attributes go straight into __dict__ (a class's own __setattr__, such as
    torch.nn.Module's, expects state that is not there yet); __slots__ through the slot.
    """
    obj = cls.__new__(cls)
    state = getattr(obj, "__dict__", None)
    slots = slot_names(cls)
    for k, v in attrs.items():
        if isinstance(state, dict) and k not in slots:
            state[k] = v
        else:
            object.__setattr__(obj, k, v)
    return obj


def slot_names(cls):
    """The attribute names the __slots__ of `cls` and its bases define (private ones mangled)."""
    out = []
    for c in getattr(cls, "__mro__", ()):
        slots = c.__dict__.get("__slots__", ())
        for name in [slots] if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = "_%s%s" % (c.__name__.lstrip("_"), name)
            out.append(name)
    return out


def _table(arrays):
    if arrays is None:
        return {}
    return arrays() if callable(arrays) else arrays
