"""The trusted side of the bridge: what grader tests use to reach the code under test.

The tests run in a process that never imports the submission. The submission is
imported only in the *candidate*, a process of its own in a sandbox of its own, which
sees the workspace and the arguments of each call and nothing of the grader. A call goes
there as data (the record codec's trees) and its answer comes back as data, decoded
strictly (strict.py): what a test gets is always a value built here, so an object with
its own comparison, a subclass or a patched library cannot reach an assertion.

    from lmr_bridge import candidate, probe

    loss = candidate.function("trainers:preference_loss")   # module:qualified name
    losses, chosen, rejected = loss(pc, pr, rc, rr, 0.1)     # plain data back

    @probe
    def grads(pc, pr, rc, rr, beta):                         # runs in the candidate
        import torch
        from trainers import preference_loss
        ...
        return [t.grad for t in ts]                          # plain data back

The candidate is started by lmr's harness; `configure` is the harness's call. A crash,
an exit, a hang or a signal in the candidate fails the test that was waiting on it, and
the next call gets a fresh candidate.
"""
import builtins
import functools
import hashlib
import json
import socket
import time

from lmr_record import encode

from . import ship, strict, wire

_MAX_TEXT = 4000


class CandidateError(BaseException):
    """The candidate could not give an answer (it crashed, exited, hung, sent what the oracle
    does not accept, or the call could not be made there). A BaseException, so a test's
    `except Exception` or `pytest.raises(Exception)` cannot take it for the code's own error."""


class CandidateImportError(CandidateError):
    """The code under test could not be imported in the candidate (a syntax error, a module
    it needs that is not installed, an exception at import): the run cannot grade it."""


class RemoteError(Exception):
    """The code under test raised an exception whose class is not a builtin one. `type_name`
    ("module:Qual"), `mro` (the class names, most derived first), `message`, `traceback`."""

    def __init__(self, info):
        self.type_name = info.get("type", "?")
        self.mro = list(info.get("mro") or [])
        self.message = info.get("message", "")
        self.traceback = info.get("traceback", "")
        super().__init__("%s: %s" % (self.type_name, self.message))

    def is_a(self, name):
        """Whether the raised class is `name` or derives from it ("ValueError", "pkg.mod:Error")."""
        return any(n == name or n.rpartition(":")[2] == name or n.rpartition(".")[2] == name for n in self.mro)


class Candidate:
    """The connection to the candidate process. One per test process: `candidate` below."""

    def __init__(self):
        self._path = None
        self._sock = None
        self._rid = 0
        self._connect_timeout = 120.0
        self._trace = False
        self.test = None
        self.lines = {}
        self.connections = 0
        self.import_failures = []

    def configure(self, socket_path, connect_timeout=120.0, trace=False):
        """Where the candidate listens (the harness's --bridge); `trace`: collect executed lines."""
        self._path = socket_path
        self._connect_timeout = float(connect_timeout)
        self._trace = bool(trace)

    # ----------------------------------------------------------------- the connection

    def _connect(self):
        if self._path is None:
            raise CandidateError(
                "there is no candidate process: these tests run under lmr's harness (lmr verify, lmr eval), "
                "which starts the code under test in a process of its own"
            )
        deadline = time.monotonic() + self._connect_timeout
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self._path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                s.close()
                # a candidate that served this run before and no longer listens is gone (the code
                # under test killed its server): waiting for it again would only run out the clock
                if self.connections > 0:
                    raise CandidateError("the candidate process is gone: nothing listens on the bridge any more") from None
                if time.monotonic() > deadline:
                    raise CandidateError("the candidate process did not start listening within %g s" % self._connect_timeout) from None
                time.sleep(0.005)
            except OSError as e:
                s.close()
                raise CandidateError("cannot reach the candidate process: %s" % e) from None
        self._sock = s
        self.connections += 1

    def restart(self):
        """Drops the candidate: the next call gets a fresh one (the old one is killed)."""
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None

    def request(self, doc, arrays=None, what="the call"):
        """One request and its reply (doc, arrays). Anything that goes wrong on the way drops
        the connection, so the next request starts a fresh candidate."""
        if self._sock is None:
            self._connect()
        self._rid += 1
        doc = dict(doc, rid=self._rid, test=self.test, trace=self._trace)
        ok = False
        try:
            wire.send(self._sock, doc, arrays)
            reply, reply_arrays = wire.recv(self._sock)
            ok = True
        except wire.Closed:
            raise CandidateError(
                "the candidate process ended while it ran %s (it crashed, exited, was killed for memory or by a signal)" % what
            ) from None
        except wire.WireError as e:
            raise CandidateError("the candidate answered %s with something that is not a bridge frame: %s" % (what, e)) from None
        except OSError as e:
            raise CandidateError("the connection to the candidate broke while it ran %s: %s" % (what, e)) from None
        finally:
            if not ok:
                self.restart()
        if reply.get("rid") != self._rid:
            self.restart()
            raise CandidateError("the candidate answered out of turn (a reply to request %r, not %r)" % (reply.get("rid"), self._rid))
        if self._trace:
            self._merge_lines(reply.get("lines"))
        return reply, reply_arrays

    def _merge_lines(self, lines):
        if not isinstance(lines, dict):
            return
        mine = self.lines.setdefault(self.test, {})
        for f, nums in lines.items():
            if isinstance(f, str) and isinstance(nums, list):
                mine.setdefault(f, set()).update(n for n in nums if type(n) is int)

    def take_lines(self, test_id):
        """The lines of the traced files the candidate executed for one test (harness, traced runs)."""
        got = self.lines.pop(test_id, {})
        return {f: sorted(v) for f, v in sorted(got.items())}

    # ----------------------------------------------------------------- calls

    def call(self, target, *args, **kwargs):
        """Calls `target` ("module:Qual.name") in the candidate; returns its result as data."""
        return self._run({"op": "call", "target": str(target)}, args, kwargs, "%s(...)" % target)

    def function(self, target):
        """A stand-in for `target` that calls it in the candidate: `f = candidate.function("m:f"); f(x)`."""
        return RemoteFunction(self, str(target))

    def run_probe(self, p, args, kwargs):
        load = p.payload()
        return self._run({"op": "probe", "name": p.function.__name__, "defs": load["defs"], "imports": load["imports"], "key": p.key()}, args, kwargs, "probe %s" % p.function.__name__)

    def warm(self):
        """Starts the candidate and waits until it has imported the code under test (the harness
        calls this after collection, so no test's clock pays for the import). Never raises: a
        candidate that cannot start or import fails the tests that need it, each on its own."""
        if self._path is None:
            return False
        try:
            self.request({"op": "warm"}, what="the start of the candidate")
            return True
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            return False

    def report(self):
        """What the candidate loaded and what the tree's code imported (trusted runs): a dict, or None."""
        if self._sock is None:
            return None
        reply, _ = self.request({"op": "report"}, what="the report")
        return reply.get("report")

    def _run(self, doc, args, kwargs, what):
        trees, raw, arrays = encode_arguments(list(args) + list(kwargs.values()), what)
        doc = dict(doc, args=trees[: len(args)], kwargs=dict(zip(kwargs, trees[len(args):])), raw=raw)
        reply, reply_arrays = self.request(doc, arrays, what)
        return answer(reply, reply_arrays, what)


class RemoteFunction:
    """A function of the code under test, called in the candidate."""

    def __init__(self, cand, target):
        self._candidate = cand
        self.target = target
        self.__name__ = target.rpartition(":")[2].rpartition(".")[2] or target

    def __call__(self, *args, **kwargs):
        return self._candidate.call(self.target, *args, **kwargs)

    def __repr__(self):
        return "<%s in the candidate>" % self.target


class Probe:
    """A test-file function that runs in the candidate (see `probe`)."""

    def __init__(self, function):
        self.function = function
        functools.update_wrapper(self, function)
        self._payload = None
        self._key = None

    def payload(self):
        if self._payload is None:
            self._payload = ship.payload(self.function, "probe %s" % self.function.__name__)
        return self._payload

    def key(self):
        if self._key is None:
            self._key = hashlib.sha256(json.dumps(self.payload(), sort_keys=True).encode("utf-8")).hexdigest()[:32]
        return self._key

    def __call__(self, *args, **kwargs):
        return candidate.run_probe(self, args, kwargs)

    def __repr__(self):
        return "<probe %s>" % self.function.__name__


def probe(function):
    """Makes a test-file function run in the candidate, with the code under test importable.

    It gets its data as arguments (plain data: numbers, strings, lists, dicts, arrays,
    tensors, or recorded values through Recording.raw) and returns plain data; the test
    asserts on what it returns. Its global names must be modules, other probes, or
    @probe_helper functions and classes (their source goes along) or names importable
    from a library. It must not compute expected values: it runs where the submission does.
    """
    if isinstance(function, Probe):
        return function
    return Probe(function)


def probe_helper(obj):
    """Marks a test-file function or class whose source probes may use (it runs in the candidate too)."""
    return ship.mark_helper(obj)


# --------------------------------------------------------------------- encoding

class Raw:
    """A recorded tree passed to the candidate as it is (see Recording.raw): decoded there with
    the full codec, so instances of the code's own classes are rebuilt as such."""

    def __init__(self, tree, arrays):
        self.tree = tree
        self.arrays = arrays


class _ArgEncoder(encode.Encoder):
    def __init__(self):
        super().__init__()
        self.raw = []

    def _encode(self, value, path):
        if type(value) is Raw:
            if self._group.counting:
                return None
            self.raw.append(value.tree)
            table = value.arrays() if callable(value.arrays) else (value.arrays or {})
            for key in encode.array_keys(value.tree):
                self.arrays[key] = table[key]
            return {encode.TAG: "raw", "index": len(self.raw) - 1}
        return super()._encode(value, path)


def encode_arguments(values, what):
    """(trees, raw trees, arrays) for the arguments of one request, encoded as one group."""
    enc = _ArgEncoder()
    try:
        group = enc.encode_group([(v, "", "argument %d" % i) for i, v in enumerate(values)])
    except encode.Unsupported as e:
        raise TypeError(
            "%s: %s%s has type %s, which cannot be sent to the candidate%s; pass plain data (numbers, strings, "
            "lists, dicts, tuples, arrays, tensors) or a recorded value through Recording.raw"
            % (what, e.what or "an argument", (" " + e.path) if e.path else "", e.type_name, " (%s)" % e.reason if e.reason else "")
        ) from None
    return group.trees, enc.raw, enc.arrays


def answer(reply, arrays, what):
    """The value a reply carries, or the exception it reports, raised."""
    if "ok" in reply:
        try:
            _, values = strict.decode_group([reply["ok"]], arrays)
        except strict.Undecodable as e:
            raise CandidateError("%s returned something the oracle does not accept: %s" % (what, e)) from None
        return values[0]
    if "raised" in reply and isinstance(reply["raised"], dict):
        raise remote_exception(reply["raised"]) from None
    if "error" in reply:
        failed = reply.get("import_failed")
        if isinstance(failed, dict):
            info = {k: _short(v) for k, v in failed.items() if isinstance(v, str)}
            candidate.import_failures.append(dict(info, test=candidate.test))
            raise CandidateImportError("%s: %s" % (what, _short(reply["error"])))
        raise CandidateError("%s: %s" % (what, _short(reply["error"])))
    raise CandidateError("the candidate's reply to %s has neither a value nor an error" % what)


def remote_exception(info):
    """The exception to raise in the test for one the code raised: the nearest builtin class
    (so pytest.raises(ValueError) works for a subclass of it), else RemoteError."""
    info = {k: (_short(v) if isinstance(v, str) else v) for k, v in info.items()}
    kind = str(info.get("type", "?"))
    message = str(info.get("message", ""))
    args = info.get("args")
    plain = isinstance(args, list) and all(type(a) in (str, int, float, bool, type(None)) for a in args)
    for name in info.get("mro") or []:
        if not isinstance(name, str) or not name.startswith("builtins:"):
            continue
        cls = getattr(builtins, name.partition(":")[2], None)
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            continue
        try:
            # the class itself, rebuilt from its arguments: str(err.value) reads as in the candidate;
            # a subclass of the tree's becomes its builtin base, with the message it printed
            exc = cls(*args) if name == kind and plain else cls(message)
        except Exception:
            continue
        exc.lmr_remote = info
        _note(exc, info)
        return exc
    exc = RemoteError(info)
    _note(exc, info)
    return exc


def _note(exc, info):
    """The candidate's own traceback, for the person reading the failure (never for the verdict)."""
    tb = info.get("traceback")
    if tb and hasattr(exc, "add_note"):
        exc.add_note("raised in the candidate process (%s):\n%s" % (info.get("type", "?"), tb))


def _short(text):
    text = str(text)
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 20] + "\n...[truncated]"


candidate = Candidate()


def configure(socket_path, connect_timeout=120.0, trace=False):
    candidate.configure(socket_path, connect_timeout, trace)
