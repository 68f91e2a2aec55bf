"""lmr's value codec: Python values <-> JSON trees plus a table of arrays (.npz).

Used twice: `lmr record` encodes the calls it captures into fixtures/calls.json
(+ fixtures/calls.npz), and `lmr build` puts this very file into the bundle's grader
beside the replay tests as _lmr_codec.py, so graders decode fixtures without lmr installed.
It therefore imports only the standard library at import time; numpy, torch and
pandas are used only when a value is one of theirs.

Encoding. None, bool, str and JSON-safe ints and floats are themselves. Everything
else is a tagged object {"__lmr__": KIND, ...}: float (nan, inf), int (beyond 2**53),
complex, bytes, bytearray, tuple, set, frozenset, dict (non-str keys, or keys not in
sorted order, so that Python's insertion order survives the sorted JSON), ndarray,
npscalar, tensor, dataframe, series, pdvalues (a non-numeric pandas column),
dataclass, namedtuple, enum, object (plain instances of classes from the recorded
code base, by their __dict__) and skipped (an argument left out on purpose).
Arrays and tensors live in the npz under a content hash, so identical arrays are
stored once and the same recording gives byte-identical files.
"""
import base64
import dataclasses
import enum
import hashlib
import importlib
import io
import json
import math
import sys
import zipfile

FORMAT = "lmr-calls/1"
TAG = "__lmr__"
_SAFE_INT = 2**53
# np.savez stamps the current time into the zip; a fixed stamp keeps files reproducible.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_SIMPLE = (type(None), bool, int, float, complex, str, bytes)


class Unsupported(Exception):
    """A value the codec cannot encode: `path` says where inside the value, `type_name` what it is."""

    def __init__(self, path, type_name, reason=""):
        self.path = path
        self.type_name = type_name
        self.reason = reason
        super().__init__("%s has type %s%s" % (path or "the value", type_name, ": " + reason if reason else ""))


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


def _module(name):
    """A library module only if something already imported it: a value of its type implies that."""
    return sys.modules.get(name)


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _canonical(tree):
    return json.dumps(tree, sort_keys=True, ensure_ascii=False, allow_nan=False)


class Encoder:
    """Encodes values; arrays collect in `self.arrays` (key -> C-contiguous numpy copy).

    `allow_object(cls)` decides which plain classes may be encoded by their __dict__.
    """

    def __init__(self, allow_object=None):
        self.arrays = {}
        self._allow_object = allow_object or (lambda cls: False)
        self._path_ids = set()

    def encode(self, value, path=""):
        vid = id(value)
        if not isinstance(value, _SIMPLE):
            if vid in self._path_ids:
                raise Unsupported(path, type_name(value), "it contains itself (a reference cycle)")
            self._path_ids.add(vid)
        try:
            return self._encode(value, path)
        finally:
            self._path_ids.discard(vid)

    def _encode(self, value, path):
        t = type(value)
        if value is None or t is bool or t is str:
            return value
        if t is int:
            return value if -_SAFE_INT <= value <= _SAFE_INT else {TAG: "int", "value": str(value)}
        if t is float:
            return encode_float(value)
        top = t.__module__.split(".")[0]
        if top == "numpy":
            return self._numpy(value, path)
        if top == "torch":
            return self._torch(value, path)
        if top == "pandas":
            return self._pandas(value, path)
        if isinstance(value, enum.Enum):
            return {TAG: "enum", "type": self._ref(t, path), "name": value.name}
        if t is complex:
            return {TAG: "complex", "real": encode_float(value.real), "imag": encode_float(value.imag)}
        if t is bytes or t is bytearray:
            return {TAG: t.__name__, "base64": base64.b64encode(bytes(value)).decode("ascii")}
        if _is_namedtuple(value):
            fields = {f: self.encode(getattr(value, f), "%s.%s" % (path, f)) for f in t._fields}
            return {TAG: "namedtuple", "type": self._ref(t, path), "fields": fields}
        if t is tuple:
            return {TAG: "tuple", "items": [self.encode(v, "%s[%d]" % (path, i)) for i, v in enumerate(value)]}
        if t is list:
            return [self.encode(v, "%s[%d]" % (path, i)) for i, v in enumerate(value)]
        if isinstance(value, dict):
            return self._dict(value, path)
        if t is set or t is frozenset:
            items = [self.encode(v, "%s{%r}" % (path, v)) for v in value]
            return {TAG: t.__name__, "items": sorted(items, key=_canonical)}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: self.encode(getattr(value, f.name), "%s.%s" % (path, f.name)) for f in dataclasses.fields(value)}
            return {TAG: "dataclass", "type": self._ref(t, path), "fields": fields}
        if self._allow_object(t) and isinstance(getattr(value, "__dict__", None), dict) and not hasattr(t, "__slots__"):
            return {TAG: "object", "type": self._ref(t, path), "state": self._dict(vars(value), path, attrs=True)}
        raise Unsupported(path, type_name(value))

    def _ref(self, cls, path):
        ref = type_ref(cls)
        if ref is None:
            raise Unsupported(path, type_name(cls), "its class cannot be imported by name (defined in the driver or inside a function)")
        return ref

    def _dict(self, value, path, attrs=False):
        where = (lambda k: "%s.%s" % (path, k)) if attrs else (lambda k: "%s[%r]" % (path, k))
        keys = list(value)
        if all(type(k) is str for k in keys) and TAG not in value and keys == sorted(keys):
            return {k: self.encode(v, where(k)) for k, v in value.items()}
        items = [[self.encode(k, "%s key %r" % (path, k)), self.encode(v, where(k))] for k, v in value.items()]
        return {TAG: "dict", "items": items}

    def add_array(self, arr, path):
        np = _module("numpy")
        if arr.dtype.hasobject:
            raise Unsupported(path, "numpy array of dtype object", "convert it to a numeric array or a list in the driver")
        arr = np.array(arr, order="C", copy=True)  # ascontiguousarray would turn 0-d into 1-d
        digest = hashlib.sha256()
        digest.update(("%s|%s|" % (arr.dtype.str, arr.shape)).encode("ascii"))
        digest.update(arr.tobytes())
        key = "a" + digest.hexdigest()[:24]
        self.arrays.setdefault(key, arr)
        return key

    def _numpy(self, value, path):
        np = _module("numpy")
        if isinstance(value, np.ndarray):
            if isinstance(value, np.ma.MaskedArray):
                raise Unsupported(path, type_name(value), "masked arrays lose their mask; pass .filled() or the data and mask separately")
            return {TAG: "ndarray", "dtype": str(value.dtype), "shape": list(value.shape), "key": self.add_array(value, path)}
        if isinstance(value, np.generic):
            item = value.item()
            if not isinstance(item, (bool, int, float, complex, str, bytes)):
                raise Unsupported(path, type_name(value))
            return {TAG: "npscalar", "dtype": str(value.dtype), "value": self.encode(item, path)}
        raise Unsupported(path, type_name(value))

    def _torch(self, value, path):
        torch = _module("torch")
        if not isinstance(value, torch.Tensor):
            raise Unsupported(path, type_name(value), "only tensors are recorded from torch; convert it in the driver")
        t = value.detach()
        if t.layout != torch.strided:
            raise Unsupported(path, "sparse tensor", "call .to_dense() in the driver")
        dtype = str(t.dtype).replace("torch.", "")
        t = t.cpu()
        if t.dtype == torch.bfloat16:  # numpy has no bfloat16; float32 holds every bfloat16 exactly
            t = t.float()
        arr = t.resolve_conj().numpy() if t.is_complex() else t.numpy()
        return {TAG: "tensor", "dtype": dtype, "shape": list(value.shape), "key": self.add_array(arr, path)}

    def _pandas(self, value, path):
        pd = _module("pandas")
        if isinstance(value, pd.DataFrame):
            cols = [self._column(value.iloc[:, i], "%s[%r]" % (path, c)) for i, c in enumerate(value.columns)]
            return {
                TAG: "dataframe",
                "columns": self.encode(list(value.columns), path + ".columns"),
                "index": self._index(value.index, path + ".index"),
                "data": cols,
            }
        if isinstance(value, pd.Series):
            return {
                TAG: "series",
                "name": self.encode(value.name, path + ".name"),
                "index": self._index(value.index, path + ".index"),
                "values": self._column(value, path),
            }
        raise Unsupported(path, type_name(value), "only DataFrame and Series are recorded from pandas")

    def _index(self, index, path):
        if index.nlevels > 1:
            raise Unsupported(path, "pandas.MultiIndex", "call .reset_index() in the driver")
        return {"name": self.encode(index.name, path + ".name"), "values": self._column(index, path)}

    def _column(self, column, path):
        np = _module("numpy")
        dtype = column.dtype
        if isinstance(dtype, np.dtype) and not dtype.hasobject:
            return self.encode(column.to_numpy(), path)
        return {TAG: "pdvalues", "dtype": str(dtype), "items": [self.encode(v, "%s[%d]" % (path, i)) for i, v in enumerate(column.tolist())]}


def encode_float(x):
    if x != x:
        return {TAG: "float", "value": "nan"}
    if x in (math.inf, -math.inf):
        return {TAG: "float", "value": "inf" if x > 0 else "-inf"}
    return x


def array_keys(tree, out=None):
    """Every array key a tree refers to."""
    out = set() if out is None else out
    if isinstance(tree, list):
        for v in tree:
            array_keys(v, out)
    elif isinstance(tree, dict):
        if tree.get(TAG) in ("ndarray", "tensor"):
            out.add(tree["key"])
        for v in tree.values():
            array_keys(v, out)
    return out


def dumps(doc):
    """The one JSON layout of a recording: sorted keys, shortest float repr, no NaN literals."""
    return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def npz_bytes(arrays):
    """An .npz (zip of .npy) with members in key order and fixed timestamps: same arrays, same bytes."""
    np = _module("numpy")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for key in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, arrays[key], allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=_ZIP_DATE)
            info.create_system = 3
            info.external_attr = 0o644 << 16
            z.writestr(info, buf.getvalue())
    return out.getvalue()


# ----------------------------------------------------------------------------------- decoding


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


def decode(tree, arrays=None):
    """The value a tree encodes. `arrays` is a dict of arrays, or a function that returns one."""
    if isinstance(tree, list):
        return [decode(v, arrays) for v in tree]
    if not isinstance(tree, dict):
        return tree
    kind = tree.get(TAG)
    if kind is None:
        return {k: decode(v, arrays) for k, v in tree.items()}
    if kind == "float":
        return float(tree["value"])
    if kind == "int":
        return int(tree["value"])
    if kind == "complex":
        return complex(decode(tree["real"]), decode(tree["imag"]))
    if kind in ("bytes", "bytearray"):
        raw = base64.b64decode(tree["base64"])
        return raw if kind == "bytes" else bytearray(raw)
    if kind == "tuple":
        return tuple(decode(v, arrays) for v in tree["items"])
    if kind in ("set", "frozenset"):
        items = [decode(v, arrays) for v in tree["items"]]
        return set(items) if kind == "set" else frozenset(items)
    if kind == "dict":
        return {decode(k, arrays): decode(v, arrays) for k, v in tree["items"]}
    if kind == "ndarray":
        import numpy as np

        return np.array(_table(arrays)[tree["key"]])
    if kind == "npscalar":
        import numpy as np

        return np.dtype(tree["dtype"]).type(decode(tree["value"]))
    if kind == "tensor":
        import torch

        t = torch.from_numpy(_table(arrays)[tree["key"]].copy())
        return t.to(getattr(torch, tree["dtype"]))
    if kind == "dataframe":
        import pandas as pd

        columns = decode(tree["columns"], arrays)
        data = {i: _pd_values(c, arrays) for i, c in enumerate(tree["data"])}
        frame = pd.DataFrame(data, index=_pd_index(tree["index"], arrays))
        frame.columns = pd.Index(columns)
        return frame
    if kind == "series":
        import pandas as pd

        return pd.Series(_pd_values(tree["values"], arrays), index=_pd_index(tree["index"], arrays), name=decode(tree["name"], arrays))
    if kind == "enum":
        return getattr(resolve_type(tree["type"]), tree["name"])
    if kind == "namedtuple":
        return resolve_type(tree["type"])(**{k: decode(v, arrays) for k, v in tree["fields"].items()})
    if kind in ("dataclass", "object"):
        cls = resolve_type(tree["type"])
        return restore_instance(cls, decode(tree["fields" if kind == "dataclass" else "state"], arrays))
    if kind == "skipped":
        return Skipped(tree["type"], tree["has_default"])
    raise ValueError("unknown tag %r in a recording (written by a newer lmr?)" % (kind,))


def restore_instance(cls, attrs):
    """An instance of `cls` with `attrs` set, without running __init__ (as unpickling does)."""
    obj = cls.__new__(cls)
    state = getattr(obj, "__dict__", None)
    for k, v in attrs.items():
        if isinstance(state, dict):
            state[k] = v
        else:
            object.__setattr__(obj, k, v)
    return obj


def _table(arrays):
    if arrays is None:
        return {}
    return arrays() if callable(arrays) else arrays


def _pd_values(tree, arrays):
    if not (isinstance(tree, dict) and tree.get(TAG) == "pdvalues"):
        return decode(tree, arrays)
    items = [decode(v, arrays) for v in tree["items"]]
    if tree["dtype"] == "object":
        import numpy as np

        out = np.empty(len(items), dtype=object)
        for i, v in enumerate(items):
            out[i] = v
        return out
    import pandas as pd

    return pd.array(items, dtype=tree["dtype"])


def _pd_index(tree, arrays):
    import pandas as pd

    return pd.Index(_pd_values(tree["values"], arrays), name=decode(tree["name"], arrays))
