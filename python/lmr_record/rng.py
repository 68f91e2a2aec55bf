"""Random-number states around a recorded call, so that a replay can draw the same numbers.

A call that changes the state of `random`, numpy's global RandomState or torch's
default generators draws random numbers (torch.multinomial, np.random.choice, ...).
For such a call the recording keeps the states it started from, under "rng", and the
replay sets them before it calls the implementation; a call that draws nothing gets
no "rng", so recordings of deterministic code are as they were. Only libraries some
code already imported are looked at.
"""
import base64
import struct
import sys


def capture():
    """The current states, by library."""
    out = {}
    random = sys.modules.get("random")
    if random is not None:
        out["random"] = random.getstate()
    np = sys.modules.get("numpy")
    if np is not None and hasattr(np, "random"):
        out["numpy"] = np.random.get_state()
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "get_rng_state"):
        out["torch"] = torch.get_rng_state()
        cuda = getattr(torch, "cuda", None)
        if cuda is not None and cuda.is_available() and cuda.is_initialized():
            out["torch_cuda"] = cuda.get_rng_state_all()
    return out


def changed(start, end):
    """Names of the libraries whose state differs between two captures."""
    return sorted(name for name in start if name in end and not _same(name, start[name], end[name]))


def _same(name, a, b):
    if name == "random":
        return a == b
    if name == "numpy":
        np = sys.modules["numpy"]
        return a[0] == b[0] and np.array_equal(a[1], b[1]) and tuple(a[2:]) == tuple(b[2:])
    torch = sys.modules["torch"]
    if name == "torch":
        return torch.equal(a, b)
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def encode(encoder, states, names):
    """The "rng" entry of a call: each named library's state, in the codec's terms."""
    out = {}
    for name in names:
        state = states[name]
        if name == "random":
            version, internal, gauss = state
            # 625 32-bit words: compact as bytes, and no numpy needed to read them back
            out[name] = {"version": version, "words": base64.b64encode(struct.pack("<%dI" % len(internal), *internal)).decode("ascii"), "gauss_next": gauss}
        else:
            out[name] = encoder.encode(state if name != "numpy" else tuple(state), "rng." + name)
    return out
