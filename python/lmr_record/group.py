"""A group of values encoded together, and what identity they share (see encode.Encoder.encode_group).

An object met twice in a group gets a label: written once with "id": N, referred to after
as {"__lmr__": "ref", "id": N}. Group.strip() writes out again in full the ones whose
identity turned out not to matter, so the bytes are those of a recording without them.
"""
import copy
import json

from .codec import TAG


class Group:
    """One group of values being encoded: occurrence counts, labels of shared objects, their nodes."""

    def __init__(self, before=None):
        self.before = before  # the group of the same call before it ran (for "was")
        self.counting = True
        self.counts = {}
        self.alive = []  # keeps counted objects alive, so ids stay unique
        self.shared = set()
        self.labels = {}  # id(obj) -> label
        self.objects = {}  # label -> obj
        self.defs = {}  # label -> the node that defines it
        self.wrapped = {}  # label -> "list" / "dict" when the node was a plain list / dict
        self.key_ids = set()  # ids of objects used as dict keys or set members
        self.param_nodes = {}  # id(tensor) -> its node, for Parameters and leaf tensors that require grad
        self.next_label = 1
        self.trees = []

    def new_label(self):
        label = self.next_label
        self.next_label += 1
        return label

    def label_node(self, node):
        """The label of a node of this group, giving it one if it has none."""
        if "id" not in node:
            node["id"] = self.new_label()
            self.defs[node["id"]] = node
        return node["id"]

    def inline(self, tree):
        """The tree with refs replaced by what they refer to and identity marks removed."""
        return _inline(tree, self.defs)

    def strip(self, keep):
        """Drops the labels of shared objects for which keep(label, obj) is false, writing them out
        in full at every place again: identity that did not matter leaves the bytes as they were."""
        drop = {label for label, obj in self.objects.items() if label in self.defs and not keep(label, obj)}
        if not drop:
            return
        def_ids = {id(self.defs[label]): label for label in drop}
        done = {}

        def resolved(label):
            # the definition, fixed once, in the form it has when nothing is shared
            if label not in done:
                node = self.defs[label]
                for k in list(node):
                    node[k] = fix(node[k])
                del node["id"]
                kind = self.wrapped.get(label)
                if kind == "list":
                    node = node["items"]
                elif kind == "dict":
                    node = {k: v for k, v in node["items"]}
                done[label] = node
            return done[label]

        def fix(node):
            if isinstance(node, list):
                for i, v in enumerate(node):
                    node[i] = fix(v)
                return node
            if not isinstance(node, dict):
                return node
            if id(node) in def_ids:
                return resolved(def_ids[id(node)])
            if node.get(TAG) == "ref" and node["id"] in drop:
                return copy.deepcopy(resolved(node["id"]))
            for k in list(node):
                node[k] = fix(node[k])
            return node

        self.trees = [fix(t) for t in self.trees]
        for label in drop:
            del self.defs[label]


def _inline(tree, defs):
    if isinstance(tree, list):
        return [_inline(v, defs) for v in tree]
    if not isinstance(tree, dict):
        return tree
    if tree.get(TAG) == "ref":
        return _inline(defs[tree["id"]], defs)
    out = {k: _inline(v, defs) for k, v in tree.items() if k not in ("id", "was")}
    # the forms a shared list or plain dict took to carry its label, back to the plain ones
    if out.get(TAG) == "list" and set(out) == {TAG, "items"}:
        return out["items"]
    if out.get(TAG) == "dict" and set(out) == {TAG, "items"}:
        keys = [k for k, _ in out["items"]]
        if all(type(k) is str for k in keys) and TAG not in keys and keys == sorted(keys):
            return {k: v for k, v in out["items"]}
    return out


def canonical(tree, defs=None):
    """One string per encoded value, whatever its identity marks: for "did it change?"."""
    return json.dumps(_inline(tree, defs or {}), sort_keys=True, ensure_ascii=False, allow_nan=False)
