"""Python values -> lmr's JSON trees plus a table of arrays (.npz): what `lmr record` writes.

The trees are described in codec.py, which reads them back (and is all a grader gets).
A value that cannot be encoded faithfully raises Unsupported, naming where it is and
why: nothing is dropped. Arrays and tensors live in the npz under a content hash, so
identical arrays are stored once and the same recording gives byte-identical files.
"""
import base64
import collections
import dataclasses
import enum
import hashlib
import io
import json
import math
import sys
import zipfile

from .codec import TAG, type_name, type_ref
from .group import Group

_SAFE_INT = 2**53
# np.savez stamps the current time into the zip; a fixed stamp keeps files reproducible.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_SIMPLE = (type(None), bool, int, float, complex, str, bytes)
# dict subclasses that round-trip as cls() filled item by item
_DICT_TYPES = {collections.OrderedDict: "collections:OrderedDict", collections.Counter: "collections:Counter"}

class Unsupported(Exception):
    """A value the codec cannot encode: `path` says where inside the value, `type_name` what it is.
    `what` names the value within its group (set by Encoder.encode_group), e.g. "argument 'x'"."""

    def __init__(self, path, type_name, reason=""):
        self.path = path
        self.type_name = type_name
        self.reason = reason
        self.what = ""
        super().__init__("%s has type %s%s" % (path or "the value", type_name, ": " + reason if reason else ""))


def _module(name):
    """A library module only if something already imported it: a value of its type implies that."""
    return sys.modules.get(name)


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _canonical(tree):
    return json.dumps(tree, sort_keys=True, ensure_ascii=False, allow_nan=False)


def _top(value):
    return type(value).__module__.split(".")[0]


def is_tracked(value):
    """Whether identity matters for a value: mutable containers, arrays, tensors, objects."""
    t = type(value)
    if t in (list, set, bytearray) or isinstance(value, dict):
        return True
    if t in _SIMPLE or isinstance(value, (tuple, frozenset, enum.Enum, type)):
        return False
    top = _top(value)
    if top == "numpy":
        return isinstance(value, _module("numpy").ndarray)
    if top == "torch":
        torch = _module("torch")
        return isinstance(value, (torch.Tensor, torch.Generator, torch.nn.Module, torch.optim.Optimizer))
    if top == "pandas":
        pd = _module("pandas")
        return isinstance(value, (pd.DataFrame, pd.Series))
    return hasattr(value, "__dict__") or dataclasses.is_dataclass(value)


def _param_like(value):
    """Tensors other objects hold on to (a model, an optimizer): their updates must be in place."""
    torch = _module("torch")
    return isinstance(value, torch.nn.Parameter) or (value.requires_grad and value.is_leaf)


class Encoder:
    """Encodes values; arrays collect in `self.arrays` (key -> C-contiguous numpy copy).

    `allow_object(cls)` decides which plain classes may be encoded by their __dict__.
    """

    def __init__(self, allow_object=None):
        self.arrays = {}
        self._allow_object = allow_object or (lambda cls: False)
        self._path_ids = set()
        self._group = None
        self._depth = 0
        self._exempt = False

    def encode(self, value, path=""):
        """One value on its own."""
        return self.encode_group([(value, path, "")]).trees[0]

    def encode_group(self, items, before=None):
        """Encodes (value, path, what[, exempt]) items together; returns the Group (trees in .trees).

        Two passes: the first counts how often each mutable object occurs, the second
        writes shared ones once and refers to them after. With `before` (the group of
        the same call before it ran), a Parameter or leaf tensor that requires grad and
        was already there is marked "was": LABEL, so the replay can check it was
        updated in place; `exempt` items (an argument after the call) skip that at the top.
        """
        group = Group(before)
        self._group = group
        try:
            for _ in range(2):
                trees = []
                for item in items:
                    value, path, what = item[0], item[1], item[2]
                    self._exempt = len(item) > 3 and item[3]
                    try:
                        trees.append(self._value(value, path))
                    except Unsupported as e:
                        e.what = e.what or what
                        raise
                if group.counting:
                    group.counting = False
                    group.shared = {k for k, n in group.counts.items() if n > 1}
            group.trees = trees
            return group
        finally:
            self._group = None
            self._path_ids.clear()

    def _value(self, value, path):
        vid = id(value)
        simple = isinstance(value, _SIMPLE)
        if not simple and vid in self._path_ids:
            raise Unsupported(path, type_name(value), "it contains itself (a reference cycle)")
        g = self._group
        tracked = not simple and is_tracked(value)
        label = None
        if tracked:
            if g.counting:
                g.counts[vid] = g.counts.get(vid, 0) + 1
                g.alive.append(value)
                if g.counts[vid] > 1:
                    return None  # counted; its inside was counted at the first occurrence
            elif vid in g.shared:
                if vid in g.labels:
                    return {TAG: "ref", "id": g.labels[vid]}
                label = g.labels[vid] = g.new_label()
                g.objects[label] = value
        if not simple:
            self._path_ids.add(vid)
        self._depth += 1
        try:
            node = self._encode(value, path)
        finally:
            self._depth -= 1
            self._path_ids.discard(vid)
        if label is not None:
            if isinstance(node, list):
                node, g.wrapped[label] = {TAG: "list", "items": node}, "list"
            elif isinstance(node, dict) and TAG not in node:
                node, g.wrapped[label] = {TAG: "dict", "items": [[k, v] for k, v in node.items()]}, "dict"
            node["id"] = label
            g.defs[label] = node
        return node

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
            fields = {f: self._value(getattr(value, f), "%s.%s" % (path, f)) for f in t._fields}
            return {TAG: "namedtuple", "type": self._ref(t, path), "fields": fields}
        if t is tuple:
            return {TAG: "tuple", "items": [self._value(v, "%s[%d]" % (path, i)) for i, v in enumerate(value)]}
        if t is list:
            return [self._value(v, "%s[%d]" % (path, i)) for i, v in enumerate(value)]
        if isinstance(value, dict):
            return self._dict(value, path)
        if t is set or t is frozenset:
            items = [self._member(v, "%s{%r}" % (path, v)) for v in value]
            return {TAG: t.__name__, "items": items if self._group.counting else sorted(items, key=_canonical)}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: self._value(getattr(value, f.name), "%s.%s" % (path, f.name)) for f in dataclasses.fields(value)}
            return {TAG: "dataclass", "type": self._ref(t, path), "fields": fields}
        torch = _module("torch")
        if torch is not None and isinstance(value, torch.Tensor):
            return self._tensor(value, path)  # a subclass from elsewhere: refused there, with the reason
        if self._allow_object(t):
            return self._object(value, path)
        raise Unsupported(path, type_name(value))

    def _member(self, value, path):
        """A dict key or set member: its identity is how it is found, so a shared one keeps its label."""
        if not isinstance(value, _SIMPLE) and is_tracked(value):
            self._group.key_ids.add(id(value))
        return self._value(value, path)

    def _object(self, value, path):
        t = type(value)
        if not isinstance(getattr(value, "__dict__", None), dict) or hasattr(t, "__slots__"):
            raise Unsupported(path, type_name(value), "an object with __slots__ or without a __dict__")
        return {TAG: "object", "type": self._ref(t, path), "state": self._dict(vars(value), path, attrs=True)}

    def _ref(self, cls, path):
        ref = type_ref(cls)
        if ref is None:
            raise Unsupported(path, type_name(cls), "its class cannot be imported by name (defined in the driver or inside a function)")
        return ref

    def _dict(self, value, path, attrs=False):
        where = (lambda k: "%s.%s" % (path, k)) if attrs else (lambda k: "%s[%r]" % (path, k))
        t = type(value)
        keys = list(value)
        if t is dict and all(type(k) is str for k in keys) and TAG not in value and keys == sorted(keys):
            return {k: self._value(v, where(k)) for k, v in value.items()}
        items = [[self._member(k, "%s key %r" % (path, k)), self._value(v, where(k))] for k, v in value.items()]
        if t is dict:
            return {TAG: "dict", "items": items}
        if t in _DICT_TYPES:
            return {TAG: "dict", "type": _DICT_TYPES[t], "items": items}
        if t is collections.defaultdict:
            factory = value.default_factory
            ref = None if factory is None else (type_ref(factory) if isinstance(factory, type) else None)
            if factory is not None and ref is None:
                raise Unsupported(path, type_name(value), "its default_factory %r cannot be imported by name; use a class such as dict or list" % (factory,))
            return {TAG: "defaultdict", "factory": ref, "items": items}
        raise Unsupported(path, type_name(value), "a dict subclass; pass dict(...) of it in the driver")

    def add_array(self, arr, path):
        np = _module("numpy")
        if arr.dtype.hasobject:
            raise Unsupported(path, "numpy array of dtype object", "convert it to a numeric array or a list in the driver")
        if self._group is not None and self._group.counting:
            return ""
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
            if type(value) is not np.ndarray:
                raise Unsupported(path, type_name(value), "an ndarray subclass would come back as a plain ndarray; pass np.asarray(...) in the driver")
            return {TAG: "ndarray", "dtype": str(value.dtype), "shape": list(value.shape), "key": self.add_array(value, path)}
        if isinstance(value, np.generic):
            item = value.item()
            if not isinstance(item, (bool, int, float, complex, str, bytes)):
                raise Unsupported(path, type_name(value))
            return {TAG: "npscalar", "dtype": str(value.dtype), "value": self._value(item, path)}
        raise Unsupported(path, type_name(value))

    def _torch(self, value, path):
        torch = _module("torch")
        if isinstance(value, torch.Tensor):
            return self._tensor(value, path)
        if isinstance(value, torch.dtype):
            return {TAG: "torch_dtype", "name": str(value).replace("torch.", "")}
        if isinstance(value, torch.device):
            return {TAG: "torch_device", "name": str(value)}
        if isinstance(value, torch.Size):
            return {TAG: "torch_size", "items": list(value)}
        if isinstance(value, torch.Generator):
            return {TAG: "torch_generator", "device": str(value.device), "state": self._value(value.get_state(), path + ".get_state()")}
        if isinstance(value, (torch.nn.Module, torch.optim.Optimizer)):
            return self._object(value, path)
        raise Unsupported(path, type_name(value), "lmr records tensors, dtypes, devices, sizes, generators, modules and optimizers from torch; convert it in the driver")

    def _tensor(self, value, path):
        torch = _module("torch")
        parameter = type(value) is torch.nn.Parameter
        if type(value) is not torch.Tensor and not parameter:
            raise Unsupported(path, type_name(value), "a tensor subclass would come back as a plain tensor; pass .as_subclass(torch.Tensor) in the driver")
        if value.layout != torch.strided:
            raise Unsupported(path, "sparse tensor", "call .to_dense() in the driver")
        if value.is_quantized or value.is_meta:
            raise Unsupported(path, "quantized or meta tensor", "pass a dense, materialised tensor")
        if any(n is not None for n in value.names):
            raise Unsupported(path, "named tensor", "call .rename(None) in the driver")
        t = value.detach()
        dtype = str(t.dtype).replace("torch.", "")
        t = t.cpu()
        if t.dtype == torch.bfloat16:  # numpy has no bfloat16; float32 holds every bfloat16 exactly
            t = t.float()
        arr = t.resolve_conj().numpy() if t.is_complex() else t.numpy()
        node = {TAG: "tensor", "dtype": dtype, "shape": list(value.shape), "key": self.add_array(arr, path)}
        if parameter:
            node["parameter"] = True
        if value.requires_grad:
            node["requires_grad"] = True
        grad = value.grad if value.is_leaf else None
        if grad is not None:
            node["grad"] = self._value(grad, path + ".grad")
        g = self._group
        if not g.counting and _param_like(value):
            g.param_nodes.setdefault(id(value), node)
            if g.before is not None and not (self._exempt and self._depth == 1):
                before_node = g.before.param_nodes.get(id(value))
                if before_node is not None:
                    node["was"] = g.before.label_node(before_node)
        return node

    def _pandas(self, value, path):
        pd = _module("pandas")
        if isinstance(value, pd.DataFrame):
            cols = [self._column(value.iloc[:, i], "%s[%r]" % (path, c)) for i, c in enumerate(value.columns)]
            return {
                TAG: "dataframe",
                "columns": self._value(list(value.columns), path + ".columns"),
                "index": self._index(value.index, path + ".index"),
                "data": cols,
            }
        if isinstance(value, pd.Series):
            return {
                TAG: "series",
                "name": self._value(value.name, path + ".name"),
                "index": self._index(value.index, path + ".index"),
                "values": self._column(value, path),
            }
        raise Unsupported(path, type_name(value), "only DataFrame and Series are recorded from pandas")

    def _index(self, index, path):
        if index.nlevels > 1:
            raise Unsupported(path, "pandas.MultiIndex", "call .reset_index() in the driver")
        return {"name": self._value(index.name, path + ".name"), "values": self._column(index, path)}

    def _column(self, column, path):
        np = _module("numpy")
        dtype = column.dtype
        if isinstance(dtype, np.dtype) and not dtype.hasobject:
            return self._value(column.to_numpy(), path)
        return {TAG: "pdvalues", "dtype": str(dtype), "items": [self._value(v, "%s[%d]" % (path, i)) for i, v in enumerate(column.tolist())]}


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
