"""The bridge's frames: one JSON document plus the raw bytes of the arrays it refers to.

A frame is a 20-byte header (magic b"LMRB", the JSON's length, the blob's length, both
unsigned 64-bit big-endian), the JSON (UTF-8) and the blob. The JSON's "arrays" maps each
array key the trees use to [dtype, shape, offset, nbytes] inside the blob. Nothing is
pickled: a frame carries only data, and the receiver checks every length and every dtype
before it believes them. Standard library at import; numpy only for frames with arrays.
"""
import json
import os
import struct

MAGIC = b"LMRB"
HEADER = struct.Struct("!4sQQ")
# what one frame may carry: the oracle reads candidate frames, which the submission controls
MAX_JSON = int(os.environ.get("LMR_BRIDGE_MAX_JSON", str(256 << 20)))
MAX_BLOB = int(os.environ.get("LMR_BRIDGE_MAX_BLOB", str(2 << 30)))
# array kinds that hold plain numbers or fixed-width text; never objects or structured records
_ARRAY_KINDS = "biufcUSMm"


class WireError(Exception):
    """A frame that is not one: cut off, too large, or not the documented layout."""


class Closed(WireError):
    """The other side closed the connection (between frames or in the middle of one)."""


def send(sock, doc, arrays=None):
    """Sends `doc` (a dict; its "arrays" entry is written here) and the arrays it names."""
    parts = []
    meta = {}
    offset = 0
    for key, arr in (arrays or {}).items():
        raw = _bytes_of(arr)
        meta[key] = [arr.dtype.str, list(arr.shape), offset, len(raw)]
        parts.append(raw)
        offset += len(raw)
    doc = dict(doc)
    doc["arrays"] = meta
    body = json.dumps(doc, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    sock.sendall(HEADER.pack(MAGIC, len(body), offset) + body)
    for raw in parts:
        sock.sendall(raw)


def _bytes_of(arr):
    import numpy as np

    arr = np.ascontiguousarray(arr) if arr.ndim else np.array(arr, copy=True)
    if arr.dtype.hasobject or arr.dtype.kind not in _ARRAY_KINDS:
        raise WireError("an array of dtype %s cannot cross the bridge" % arr.dtype)
    return memoryview(arr.reshape(-1).view(np.uint8))


def recv(sock, max_json=None, max_blob=None):
    """One frame: (doc, arrays) with arrays a dict key -> read-only ndarray view of the blob."""
    max_json = MAX_JSON if max_json is None else max_json
    max_blob = MAX_BLOB if max_blob is None else max_blob
    head = _read(sock, HEADER.size, between_frames=True)
    magic, n_json, n_blob = HEADER.unpack(head)
    if magic != MAGIC:
        raise WireError("a frame that does not start with the bridge's magic bytes")
    if n_json > max_json:
        raise WireError("a frame of %d bytes of JSON (the limit is %d)" % (n_json, max_json))
    if n_blob > max_blob:
        raise WireError("a frame of %d bytes of array data (the limit is %d)" % (n_blob, max_blob))
    body = _read(sock, n_json)
    blob = _read(sock, n_blob) if n_blob else b""
    try:
        doc = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as e:
        raise WireError("a frame whose JSON does not parse: %s" % (str(e)[:200],)) from None
    if not isinstance(doc, dict):
        raise WireError("a frame whose JSON is not an object")
    meta = doc.pop("arrays", {}) or {}
    if not isinstance(meta, dict):
        raise WireError("a frame whose array table is not an object")
    return doc, (_arrays(meta, blob) if meta else {})


def _read(sock, n, between_frames=False):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], min(n - got, 1 << 20))
        if k == 0:
            if got == 0 and between_frames:
                raise Closed("the other side closed the connection")
            raise Closed("the connection closed in the middle of a frame (%d of %d bytes)" % (got, n))
        got += k
    return bytes(buf) if n < 4096 else buf


def _arrays(meta, blob):
    import numpy as np

    out = {}
    for key, spec in meta.items():
        if not (isinstance(spec, list) and len(spec) == 4):
            raise WireError("array %r: its entry is not [dtype, shape, offset, nbytes]" % (key,))
        dtype_str, shape, offset, nbytes = spec
        if not isinstance(dtype_str, str) or not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
            raise WireError("array %r: a bad dtype or shape" % (key,))
        if type(offset) is not int or type(nbytes) is not int or offset < 0 or nbytes < 0 or offset + nbytes > len(blob):
            raise WireError("array %r: its bytes lie outside the frame" % (key,))
        try:
            dtype = np.dtype(dtype_str)
        except TypeError:
            raise WireError("array %r: %r is not a dtype" % (key, dtype_str)) from None
        if dtype.hasobject or dtype.kind not in _ARRAY_KINDS or dtype.fields is not None or dtype.subdtype is not None:
            raise WireError("array %r: dtype %s is not allowed (numbers and fixed-width text only)" % (key, dtype))
        count = 1
        for d in shape:
            count *= d
        if count * dtype.itemsize != nbytes:
            raise WireError("array %r: %d bytes do not make shape %s of %s" % (key, nbytes, shape, dtype))
        arr = np.frombuffer(blob, dtype=dtype, count=count, offset=offset).reshape(shape)
        arr.flags.writeable = False
        out[key] = arr
    return out
