"""What the oracle makes of values whose class lives in the code under test.

The trusted side never imports the submission, so an instance of one of its classes (an
object, a dataclass, a named tuple, an enum member) comes back as plain data about it: its
class's name and its attributes, in types defined here. Comparisons are ours; nothing of
the candidate's class survives the bridge.
"""


class Instance:
    """An instance of a class of the code under test: `type_name` ("module:Qual.Name"), `kind`
    ("object", "dataclass" or "namedtuple") and `attrs` (name -> decoded value). Attributes
    read as attributes; a named tuple's fields also index and iterate, in order."""

    __slots__ = ("type_name", "kind", "attrs")

    def __init__(self, type_name, kind, attrs):
        object.__setattr__(self, "type_name", type_name)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "attrs", attrs)

    def __getattr__(self, name):
        attrs = object.__getattribute__(self, "attrs")
        if name in attrs:
            return attrs[name]
        raise AttributeError("%s (from the candidate) has no attribute %r" % (object.__getattribute__(self, "type_name"), name))

    def __setattr__(self, name, value):
        raise AttributeError("values from the candidate are read-only")

    @property
    def class_name(self):
        return self.type_name.rpartition(":")[2].rpartition(".")[2]

    def __eq__(self, other):
        if type(other) is not Instance:
            return NotImplemented
        return self.type_name == other.type_name and self.kind == other.kind and self.attrs == other.attrs

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None

    def __len__(self):
        self._tuple_only()
        return len(self.attrs)

    def __iter__(self):
        self._tuple_only()
        return iter(list(self.attrs.values()))

    def __getitem__(self, index):
        self._tuple_only()
        return list(self.attrs.values())[index]

    def _tuple_only(self):
        if self.kind != "namedtuple":
            raise TypeError("%s (from the candidate) is a %s, not a sequence" % (self.type_name, self.kind))

    def __repr__(self):
        inner = ", ".join("%s=%r" % (k, v) for k, v in self.attrs.items())
        text = "%s(%s)" % (self.class_name, inner)
        return text if len(text) <= 300 else text[:290] + "...)"


class EnumMember:
    """A member of an enum of the code under test: its class's name and the member's name."""

    __slots__ = ("type_name", "name")

    def __init__(self, type_name, name):
        object.__setattr__(self, "type_name", type_name)
        object.__setattr__(self, "name", name)

    def __setattr__(self, name, value):
        raise AttributeError("values from the candidate are read-only")

    def __eq__(self, other):
        if type(other) is not EnumMember:
            return NotImplemented
        return self.type_name == other.type_name and self.name == other.name

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash((self.type_name, self.name))

    def __repr__(self):
        return "%s.%s" % (self.type_name.rpartition(":")[2], self.name)
