"""The oracle's decoder: the record codec's trees back into values, trusting nothing.

Every value it makes is an exact builtin, numpy, torch or pandas type built here from data
(never an object of the candidate's), or one of values.py's stand-ins for an instance of
the code under test's classes. It imports nothing by a name the tree gives: a class named
in a tree stays a name. Dtypes, devices and sizes are checked before they are used. A tree
it cannot make sense of raises Undecodable, which the caller turns into a failed test.
"""
import collections
import re

from lmr_record import codec

from .values import EnumMember, Instance

_FACTORIES = {"builtins:%s" % t.__name__: t for t in (list, dict, set, int, float, str, tuple, frozenset)}
_DICT_TYPES = {"collections:OrderedDict": collections.OrderedDict, "collections:Counter": collections.Counter}
_DEVICE = re.compile(r"^(cpu|cuda|meta)(:[0-9]{1,3})?$")
_SAFE_KINDS = {
    "float", "int", "complex", "bytes", "bytearray", "tuple", "list", "set", "frozenset",
    "ndarray", "npscalar", "tensor", "torch_dtype", "torch_device", "torch_size",
    "torch_generator", "dataframe", "series",
}


class Undecodable(Exception):
    """A tree the oracle will not turn into a value; the message says where and why."""


def _need(cond, message):
    if not cond:
        raise Undecodable(message)


class StrictDecoder(codec.Decoder):
    """codec.Decoder for trees from the candidate (or for recorded answers, decoded the same way)."""

    def decode(self, tree):
        if isinstance(tree, dict) and codec.TAG not in tree:
            out = {}
            for k, v in tree.items():
                out[k] = self.decode(v)
            return out
        if isinstance(tree, (bool, int, float, str)) or tree is None or isinstance(tree, list):
            return super().decode(tree)
        _need(isinstance(tree, dict), "a value of JSON type %s" % type(tree).__name__)
        return super().decode(tree)

    def _make(self, kind, tree):
        if kind in ("dict", "defaultdict"):
            return self._dict(kind, tree)
        if kind == "enum":
            _need(isinstance(tree.get("type"), str) and isinstance(tree.get("name"), str), "an enum tree without type and name")
            return EnumMember(tree["type"], tree["name"])
        if kind == "namedtuple":
            fields = tree.get("fields")
            _need(isinstance(fields, dict) and isinstance(tree.get("type"), str), "a namedtuple tree without type and fields")
            return Instance(tree["type"], "namedtuple", {str(k): self.decode(v) for k, v in fields.items()})
        if kind in ("dataclass", "object"):
            state = tree.get("fields" if kind == "dataclass" else "state")
            _need(isinstance(state, dict) and isinstance(tree.get("type"), str), "a %s tree without type and attributes" % kind)
            values = self.decode(state)
            _need(isinstance(values, dict) and all(isinstance(k, str) for k in values), "attributes that are not named by strings")
            return Instance(tree["type"], kind, values)
        _need(kind in _SAFE_KINDS, "a value tagged %r, which the oracle does not accept" % (kind,))
        if kind in ("tuple", "list", "set", "frozenset"):
            _need(isinstance(tree.get("items"), list), "a %s tree without items" % kind)
        if kind == "npscalar":
            self._np_dtype(tree.get("dtype"))
        if kind in ("dataframe", "series"):
            import pandas  # noqa: F401  (made from data below, by pandas' own constructors)
        return super()._make(kind, tree)

    def _dict(self, kind, tree):
        items = tree.get("items")
        _need(isinstance(items, list) and all(isinstance(p, list) and len(p) == 2 for p in items), "a dict tree without [key, value] items")
        if kind == "defaultdict":
            factory = tree.get("factory")
            out = collections.defaultdict(_FACTORIES.get(factory) if isinstance(factory, str) else None)
        elif "type" in tree:
            cls = _DICT_TYPES.get(tree["type"])
            _need(cls is not None, "a dict of type %r, which the oracle does not make" % (tree["type"],))
            out = cls()
        else:
            out = {}
        for k, v in items:
            key = self.decode(k)
            try:
                hash(key)
            except TypeError:
                raise Undecodable("a dict key of type %s, which is not hashable" % type(key).__name__) from None
            out[key] = self.decode(v)
        return out

    @staticmethod
    def _np_dtype(name):
        import numpy as np

        _need(isinstance(name, str), "a dtype that is not a string")
        try:
            dt = np.dtype(name)
        except TypeError:
            raise Undecodable("%r is not a numpy dtype" % (name,)) from None
        _need(not dt.hasobject and dt.kind in "biufcUSMm" and dt.fields is None, "numpy dtype %s is not allowed" % dt)
        return dt

    def _tensor(self, tree):
        import torch

        self._torch_dtype(tree.get("dtype"))
        _need(isinstance(tree.get("shape"), list), "a tensor tree without a shape")
        t = super()._tensor(tree)
        _need(list(t.shape) == tree["shape"], "a tensor whose data does not have its stated shape %s" % (tree["shape"],))
        _need(type(t) in (torch.Tensor, torch.nn.Parameter), "a tensor of type %s" % type(t).__name__)
        if t.grad is not None:
            _need(type(t.grad) is torch.Tensor, "a .grad of type %s" % type(t.grad).__name__)
        return t

    @staticmethod
    def _torch_dtype(name):
        import torch

        _need(isinstance(name, str) and isinstance(getattr(torch, name, None), torch.dtype), "%r is not a torch dtype" % (name,))

    def _torch_value(self, kind, tree):
        if kind == "torch_dtype":
            self._torch_dtype(tree.get("name"))
        elif kind == "torch_device":
            _need(isinstance(tree.get("name"), str) and _DEVICE.match(tree["name"]), "%r is not a device this oracle accepts" % (tree.get("name"),))
        elif kind == "torch_size":
            items = tree.get("items")
            _need(isinstance(items, list) and all(type(d) is int and d >= 0 for d in items), "a torch.Size of other than sizes")
        else:
            _need(tree.get("device") == "cpu", "a generator on device %r" % (tree.get("device"),))
            state = self.decode(tree.get("state"))
            import torch

            _need(type(state) is torch.Tensor and state.dtype == torch.uint8, "a generator state that is not a uint8 tensor")
            gen = torch.Generator(device="cpu")
            gen.set_state(state)
            return gen
        return super()._torch_value(kind, tree)

    def _pd_values(self, tree):
        if isinstance(tree, dict) and tree.get(codec.TAG) == "pdvalues":
            import pandas as pd

            dtype = tree.get("dtype")
            _need(isinstance(dtype, str) and isinstance(tree.get("items"), list), "a pandas column without dtype and items")
            if dtype != "object":
                try:
                    pd.api.types.pandas_dtype(dtype)
                except TypeError:
                    raise Undecodable("%r is not a pandas dtype" % (dtype,)) from None
        return super()._pd_values(tree)


def decode_group(trees, arrays):
    """Decodes trees as one group with the strict decoder: (decoder, values)."""
    decoder = StrictDecoder(arrays)
    try:
        return decoder, decoder.decode_all(trees)
    except Undecodable:
        raise
    except RecursionError:
        raise Undecodable("a value nested too deeply") from None
    except Exception as e:  # a tree of the wrong shape: KeyError, TypeError, ValueError...
        raise Undecodable("%s: %s" % (type(e).__name__, str(e)[:300])) from None
