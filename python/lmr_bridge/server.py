"""The candidate: the only process that imports the code under test.

It runs in a sandbox of its own that holds the workspace copy, the grader's candidate
files (set-up code and helpers the task declares, never fixtures or tests) and the
bridge's socket folder, and nothing else of the host. It holds no key and decides
nothing: it receives calls, runs them and sends back plain data (the record codec's
trees). Everything in this process is untrusted once the code under test has been
imported; the oracle believes only what it can check.

The server listens on a unix socket and forks a *worker* for each connection; the worker
imports the code, runs the grader's candidate set-up, and serves requests until the
connection closes. The server kills a worker whose connection closed and closes the
connection of a worker that died, so the oracle sees every crash as an end of stream.
With --control it serves several runs (verify's trusted runs), opened and closed by JSON
lines on stdin; otherwise the one run its flags describe.

Requests (wire.py frames): {"op": "call" | "probe" | "replay" | "report", "rid", "test",
"trace", ...}; replies {"rid", "ok": TREE} | {"rid", "raised": {...}} | {"rid", "error":
TEXT, "import_failed": {...}?} | {"rid", "replay": {...}} | {"rid", "report": {...}},
with "lines" (executed lines of the traced files) when the request asked to trace.
"""
import argparse
import asyncio
import builtins
import errno
import importlib
import importlib.util
import inspect
import json
import os
import resource  # at the top: a served run caps its address space, a fresh one need not, and both must load the same
import select
import shutil
import signal
import socket
import sys
import traceback
import types

from lmr_record import codec, encode

from . import introspect, replay_candidate, wire


# ===================================================================== the worker


class ImportFailed(Exception):
    """The code under test (or a module it needs) could not be imported."""

    def __init__(self, module, exc):
        self.module = module
        self.exc = exc
        missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
        self.missing = missing
        super().__init__("%s: %s" % (type(exc).__name__, exc))


class Worker:
    def __init__(self, conn, run):
        self.conn = conn
        self.run = run
        self.root = os.path.realpath(run["tree"]) + os.sep
        self.support = os.path.realpath(run["support"]) + os.sep if run.get("support") else None
        self.probes = {}
        self.tracer = introspect.LineTracer(run["tree"], run["trace"]) if run.get("trace") else None
        self.imports = None
        self.setup_error = None
        self.env_before = {}

    # ------------------------------------------------------------------ start

    def start(self):
        run = self.run
        os.chdir(run["tree"])
        toolkit = introspect.TOOLKIT_DIR.rstrip(os.sep)
        sys.path[:] = [run["tree"]] + [p for p in sys.path if p and os.path.realpath(p) != toolkit]
        if run.get("support"):
            sys.path.append(run["support"])
        os.environ["PYTHONPATH"] = run["tree"]
        self.env_before = dict(os.environ)
        if run.get("report_imports"):
            self.imports = introspect.ImportLog(run["tree"])
            self.imports.install()
        if run.get("setup"):
            try:
                spec = importlib.util.spec_from_file_location("lmr_candidate_setup", run["setup"])
                module = importlib.util.module_from_spec(spec)
                sys.modules["lmr_candidate_setup"] = module
                spec.loader.exec_module(module)
            except BaseException as e:  # pytest.skip() at module level is a BaseException
                self.setup_error = "the grader's candidate set-up (%s) failed: %s: %s\n%s" % (
                    os.path.basename(run["setup"]), type(e).__name__, e, _tail(e))
        # the code under test's modules, imported now, before the oracle's first test starts
        # its clock; one that fails is imported again (and fails again) when a test needs it
        if not self.setup_error and run.get("warm"):
            before = set(sys.modules)
            for name in run["warm"]:
                try:
                    importlib.import_module(name)
                except BaseException as e:
                    if isinstance(e, KeyboardInterrupt):
                        raise
            self._forget_tree_modules(before)

    def _forget_tree_modules(self, keep):
        """The warm-up's names for the tree's own modules are guessed from file paths, and a
        test may import the same file under another name (`loralib.adalora` with loralib/ put
        first on the path, where the guess was `loralib.loralib.adalora`); a package left in
        sys.modules under the guessed name would shadow the test's. What is worth keeping is
        what the tree imported from outside it (torch, transformers): the tree's modules the
        warm-up added are dropped, to be imported again, cheaply, under the names tests use."""
        # every place is read before any module goes: a namespace package's __path__ is
        # recomputed from its parent's, which must still be there
        drop = []
        for name in [n for n in sys.modules if n not in keep]:
            mod = sys.modules.get(name)
            try:
                places = [getattr(mod, "__file__", None) or ""] + list(getattr(mod, "__path__", None) or [])
            except Exception:
                continue
            if any(isinstance(p, str) and p and os.path.realpath(p).startswith(self.root) for p in places):
                drop.append(name)
        for name in drop:
            sys.modules.pop(name, None)

    def serve(self):
        while True:
            try:
                doc, arrays = wire.recv(self.conn)
            except wire.Closed:
                return
            except wire.WireError as e:
                sys.stderr.write("lmr candidate: a bad frame from the oracle: %s\n" % e)
                return
            reply, out_arrays = self.handle(doc, arrays)
            reply["rid"] = doc.get("rid")
            try:
                wire.send(self.conn, reply, out_arrays)
            except (OSError, wire.WireError) as e:
                if isinstance(e, OSError) and e.errno in (errno.EPIPE, errno.ECONNRESET):
                    return
                wire.send(self.conn, {"rid": doc.get("rid"), "error": "the answer could not be sent: %s" % e}, {})

    def handle(self, doc, arrays):
        op = doc.get("op")
        if self.setup_error and op not in ("report", "warm"):
            return {"error": self.setup_error}, {}
        traced = bool(doc.get("trace")) and self.tracer is not None
        if traced:
            self.tracer.start()
        lines = None
        try:
            reply, out = self.dispatch(op, doc, arrays)
        except ImportFailed as e:
            reply, out = {"error": "the code under test could not be imported: %s\n%s" % (e, _tail(e.exc)), "import_failed": {"module": e.module, "missing": e.missing, "message": str(e)[:4000]}}, {}
        except encode.Unsupported as e:
            reply, out = {"error": _unsupported(e)}, {}
        except Exception as e:
            reply, out = {"error": "the candidate could not serve the request: %s: %s\n%s" % (type(e).__name__, _text(e)[:2000], _tail(e))}, {}
        finally:
            if traced:
                lines = self.tracer.stop()
        if lines:
            reply["lines"] = lines
        return reply, out

    def dispatch(self, op, doc, arrays):
        if op == "call":
            return self.op_call(doc, arrays)
        if op == "probe":
            return self.op_probe(doc, arrays)
        if op == "replay":
            return self.op_replay(doc, arrays)
        if op == "report":
            return {"report": self.report()}, {}
        if op == "warm":
            return {"ok": None}, {}
        return {"error": "unknown request %r" % (op,)}, {}

    # ------------------------------------------------------------------ values

    def allow(self, cls):
        # a subclass of a value type would come back as an object, not as that value: refused
        # with its name rather than sent (an int that lies about equality is still no int)
        if issubclass(cls, _VALUE_TYPES) or _library_value_class(cls):
            return False
        mod = sys.modules.get(getattr(cls, "__module__", ""))
        path = getattr(mod, "__file__", None)
        if not path:
            return False
        real = os.path.realpath(path)
        return real.startswith(self.root) or (self.support is not None and real.startswith(self.support))

    def decode_args(self, doc, arrays, extra=()):
        raw = doc.get("raw") or []
        raw_values = codec.Decoder(arrays).decode_all(raw) if raw else []
        dec = _ArgDecoder(arrays, raw_values)
        args = list(doc.get("args") or [])
        kw_names = list((doc.get("kwargs") or {}).keys())
        values = dec.decode_all(args + [doc["kwargs"][k] for k in kw_names] + list(extra))
        n = len(args)
        return values[:n], dict(zip(kw_names, values[n:n + len(kw_names)])), values[n + len(kw_names):], dec

    def encode_value(self, value, what="the return value"):
        enc = encode.Encoder(self.allow)
        group = enc.encode_group([(value, "", what)])
        return group.trees[0], enc.arrays

    def resolve(self, target):
        """The object `target` names: "module:Qual.name", or "a.b.c" split where a module ends."""
        if ":" in target:
            module, _, qual = target.partition(":")
            obj = self.import_module(module)
            for part in qual.split(".") if qual else []:
                obj = getattr(obj, part)
            return obj
        parts = target.split(".")
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            spec_found = name in sys.modules or _findable(name)
            if not spec_found:
                continue
            obj = self.import_module(name)
            for part in parts[i:]:
                obj = getattr(obj, part)
            return obj
        raise ImportFailed(target, ModuleNotFoundError("no module in %r" % target, name=parts[0]))

    def import_module(self, name):
        try:
            return importlib.import_module(name)
        except BaseException as e:  # SystemExit at import too: the module did not load
            if isinstance(e, KeyboardInterrupt):
                raise
            raise ImportFailed(name, e) from None

    def raised(self, e):
        """What the code raised, as data; an import of the tree failing is an ImportFailed."""
        if _is_import_failure(e, self.root):
            raise ImportFailed(getattr(e, "name", None) or "?", e)
        cls = type(e)
        mro = []
        for c in cls.__mro__:
            if c is object:
                continue
            mro.append(codec.type_ref(c) or "%s:%s" % (c.__module__, c.__qualname__))
        return {
            "type": mro[0] if mro else codec.type_name(e),
            "mro": mro,
            "message": _text(e)[:4000],
            # plain arguments travel too, so that a builtin exception is rebuilt as raised (str() included)
            "args": list(e.args) if len(e.args) <= 8 and all(type(a) in (str, int, float, bool, type(None)) and (type(a) is not str or len(a) <= 4000) for a in e.args) else None,
            "traceback": "".join(traceback.format_exception(cls, e, e.__traceback__)[-12:])[-6000:],
        }

    # ------------------------------------------------------------------ ops

    def op_call(self, doc, arrays):
        target = doc.get("target") or ""
        fn = self.resolve(target)
        return self.call_and_reply(fn, doc, arrays)

    def call_and_reply(self, fn, doc, arrays):
        """Calls `fn` with the request's arguments: its value, or what it raised, as the reply."""
        args, kwargs, _, _ = self.decode_args(doc, arrays)
        try:
            result = fn(*args, **kwargs)
            if inspect.iscoroutine(result):
                result = asyncio.run(result)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            return {"raised": self.raised(e)}, {}
        return self.reply_value(result)

    def reply_value(self, result):
        tree, out = self.encode_value(result)
        return {"ok": tree}, out

    def namespace(self, doc):
        key = doc.get("key")
        ns = self.probes.get(key)
        if ns is not None:
            return ns
        ns = {"__name__": "lmr_probe", "__builtins__": builtins}
        for name, (module, qual) in (doc.get("imports") or {}).items():
            obj = self.import_module(module)
            for part in qual.split(".") if qual else []:
                obj = getattr(obj, part)
            ns[name] = obj
        for name, source in doc.get("defs") or []:
            exec(compile(source, "<probe file: %s>" % name, "exec"), ns)
        self.probes[key] = ns
        return ns

    def op_probe(self, doc, arrays):
        try:
            ns = self.namespace(doc)
        except ImportFailed:
            raise
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            return {"raised": self.raised(e)}, {}
        return self.call_and_reply(ns[doc["name"]], doc, arrays)

    def op_replay(self, doc, arrays):
        return replay_candidate.replay_call(self, doc, arrays)

    def report(self):
        out = {}
        if self.imports is not None:
            out["imports"] = self.imports.report(self.support and os.path.relpath(self.support, self.root) or "\0")
            own = [d for d in {os.path.dirname(self.root.rstrip(os.sep)), self.env_before.get("HOME"), self.env_before.get("TMPDIR")} if d and d != "/"]
            env_set = {k: v for k, v in os.environ.items() if self.env_before.get(k) != v and not any(d in v for d in own)}
            out["env"] = {"set": env_set, "unset": sorted(k for k in self.env_before if k not in os.environ)}
            out["server"] = introspect.loaded_modules(self.root, own + ([self.support] if self.support else []), self.run.get("server_tempdir"))
        return out


_VALUE_TYPES = (int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset, BaseException)


def _library_value_class(cls):
    """A subclass of numpy's arrays and scalars, torch's tensors or pandas' frames."""
    for c in cls.__mro__:
        top = c.__module__.split(".")[0]
        if top == "numpy" and c.__name__ in ("ndarray", "generic"):
            return True
        if top == "torch" and c.__name__ == "Tensor":
            return True
        if top == "pandas" and c.__name__ in ("DataFrame", "Series", "Index"):
            return True
    return False


class _ArgDecoder(codec.Decoder):
    """The full codec (the candidate may rebuild its own classes), plus the oracle's raw trees."""

    def __init__(self, arrays, raw_values):
        super().__init__(arrays)
        self.raw_values = raw_values

    def _make(self, kind, tree):
        if kind == "raw":
            return self.raw_values[tree["index"]]
        return super()._make(kind, tree)


def _findable(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _is_import_failure(e, root):
    """An exception that means the tree's code (or a module it needs) did not load: one raised
    by the import machinery (a module not found anywhere it is imported, a name a module lacks,
    a syntax error in a tree file), or by the
    module-level code of a tree file being imported. An ImportError the code raises itself, as
    an answer (an unknown option, say), is the code's own exception, not a failed import."""
    if isinstance(e, SyntaxError):
        f = getattr(e, "filename", None) or ""
        return os.path.realpath(f).startswith(root) if f and not f.startswith("<") else False
    if isinstance(e, ModuleNotFoundError) or (isinstance(e, ImportError) and _raised_by_import_machinery(e)):
        return True
    return _from_tree_import(e, root)


def _from_tree_import(e, root):
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "<module>" and code.co_filename and not code.co_filename.startswith("<"):
            if os.path.realpath(code.co_filename).startswith(root):
                return True
        tb = tb.tb_next
    return False


def _raised_by_import_machinery(e):
    tb = e.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return bool(last) and last.startswith("<frozen importlib")


def _text(e):
    try:
        return str(e)
    except BaseException:
        return "<an exception whose str() failed>"


def _tail(e):
    try:
        frames = traceback.extract_tb(e.__traceback__)
        frames = [f for f in frames if "lmr_bridge" not in f.filename and "importlib" not in f.filename] or frames
        return "".join(traceback.format_list(frames[-6:])).rstrip()
    except BaseException:
        return ""


def _unsupported(e):
    what = e.what or "a value"
    return "%s%s has type %s, which cannot cross to the oracle%s (the bridge carries numbers, strings, bytes, lists, tuples, dicts, sets, numpy arrays, torch tensors, pandas frames and instances of the code's own classes; not subclasses of those)" % (
        what, (" " + e.path) if e.path else "", e.type_name, " (%s)" % e.reason if e.reason else "")


# ===================================================================== the server


def preload(plan):
    """Imports a plan's modules before any worker forks (fork_server.py does the same for the
    oracle): names blocked there stay blocked; stand-in names bind nothing while importing."""
    blocked = plan.get("blocked") or []
    stand_ins = plan.get("stand_ins") or []
    for name in blocked + stand_ins:
        sys.modules.setdefault(name, None)
    done, failed = [], []
    for name in plan.get("modules") or []:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
            done.append(name)
        except BaseException as e:
            failed.append("%s: %s" % (name, e))
    for name in stand_ins:
        if sys.modules.get(name, 0) is None:
            del sys.modules[name]
    return done, failed


class Server:
    def __init__(self, control=False):
        self.control = control
        self.runs = {}  # run id -> run dict (+ "listener")
        self.workers = {}  # pid -> (run id, server's copy of the connection)
        self.by_fd = {}
        self.poller = select.poll()
        r, w = os.pipe()
        os.set_blocking(w, False)
        os.set_blocking(r, False)
        self.wake_r = r
        signal.set_wakeup_fd(w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.poller.register(r, select.POLLIN)
        self.control_buf = b""
        self.tempdir = None

    def say(self, record):
        pass

    def open_run(self, run):
        path = run["socket"]
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        if run.get("copy_from"):
            _copy_tree(run["copy_from"], run["tree"])
        lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lst.bind(path)
        lst.listen(8)
        run["listener"] = lst
        self.runs[run["id"]] = run
        self.by_fd[lst.fileno()] = ("listen", run["id"])
        self.poller.register(lst.fileno(), select.POLLIN)

    def close_run(self, run_id):
        run = self.runs.pop(run_id, None)
        if run is None:
            return
        lst = run.pop("listener")
        self.poller.unregister(lst.fileno())
        self.by_fd.pop(lst.fileno(), None)
        lst.close()
        for pid, (rid, conn) in list(self.workers.items()):
            if rid == run_id:
                self.kill_worker(pid)

    def kill_worker(self, pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        entry = self.workers.pop(pid, None)
        if entry is not None:
            self._forget(entry[1])

    def _forget(self, conn):
        try:
            self.poller.unregister(conn.fileno())
        except (KeyError, ValueError):
            pass
        self.by_fd.pop(conn.fileno(), None)
        conn.close()

    def accept(self, run_id):
        run = self.runs[run_id]
        conn, _ = run["listener"].accept()
        pid = os.fork()
        if pid == 0:
            self.become_worker(conn, run)
        self.workers[pid] = (run_id, conn)
        self.by_fd[conn.fileno()] = ("conn", pid)
        self.poller.register(conn.fileno(), select.POLLRDHUP | select.POLLHUP | select.POLLERR)

    def become_worker(self, conn, run):
        code = 0
        try:
            os.setsid()
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
                signal.signal(sig, signal.SIG_DFL)
            keep = conn.fileno()
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            for fd in _open_fds():
                if fd > 2 and fd != keep:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            if run.get("log"):
                # a served run (--control) keeps its own log: the server's streams are shared
                log = os.open(run["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                os.dup2(log, 1)
                os.dup2(log, 2)
                os.close(log)
            os.environ.update(run.get("env") or {})
            tf = sys.modules.get("tempfile")
            if tf is not None:
                run["server_tempdir"] = tf.tempdir
                tf.tempdir = None
            if run.get("as_bytes"):
                cap = int(run["as_bytes"]) + _mapped_bytes()
                resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            worker = Worker(conn, run)
            worker.start()
            worker.serve()
        except BaseException as e:  # anything here is the worker's own end
            try:
                os.write(2, ("lmr candidate: the worker stopped: %r\n%s" % (e, traceback.format_exc())).encode())
            except OSError:
                pass
            code = 1
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except BaseException:
                pass
            os._exit(code)

    def reap(self):
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            entry = self.workers.pop(pid, None)
            if entry is not None:
                # the oracle must see the end of the stream now, not at the run's end
                self._forget(entry[1])

    def control_input(self):
        try:
            chunk = os.read(0, 1 << 16)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        self.control_buf += chunk
        while b"\n" in self.control_buf:
            line, self.control_buf = self.control_buf.split(b"\n", 1)
            if not line.strip():
                continue
            msg = json.loads(line)
            if msg.get("op") == "open":
                try:
                    self.open_run(msg)
                    self.say({"t": "opened", "id": msg["id"]})
                except BaseException as e:
                    self.say({"t": "opened", "id": msg["id"], "error": "%s: %s" % (type(e).__name__, e)})
            elif msg.get("op") == "close":
                self.close_run(msg["id"])
                self.say({"t": "closed", "id": msg["id"]})
        return True

    def loop(self):
        if self.control:
            os.set_blocking(0, False)
            self.poller.register(0, select.POLLIN | select.POLLHUP)
        while True:
            try:
                events = self.poller.poll(1000)
            except InterruptedError:
                events = []
            self.reap()
            for fd, ev in events:
                if fd == self.wake_r:
                    try:
                        os.read(self.wake_r, 4096)
                    except BlockingIOError:
                        pass
                    continue
                if fd == 0 and self.control:
                    if not self.control_input():
                        return
                    continue
                kind, ref = self.by_fd.get(fd, (None, None))
                if kind == "listen" and ref in self.runs:
                    try:
                        self.accept(ref)
                    except OSError:
                        pass
                elif kind == "conn":
                    # the oracle hung up: its worker goes, whatever it is doing
                    self.kill_worker(ref)

    def shutdown(self):
        for pid in list(self.workers):
            self.kill_worker(pid)
        for run_id in list(self.runs):
            self.close_run(run_id)


def _copy_tree(src, dst):
    """The run's tree into its own (size-capped) folder, before any of its code runs."""
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.islink(s):
            os.symlink(os.readlink(s), d)
        elif os.path.isdir(s):
            shutil.copytree(s, d, symlinks=True)
        elif os.path.isfile(s):
            shutil.copy2(s, d)


def _open_fds():
    try:
        return [int(x) for x in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


def _mapped_bytes():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def parse_args(argv):
    p = argparse.ArgumentParser(prog="lmr candidate")
    p.add_argument("--control", action="store_true", help="serve runs opened by JSON lines on stdin")
    p.add_argument("--socket")
    p.add_argument("--tree")
    p.add_argument("--copy-from")
    p.add_argument("--support")
    p.add_argument("--setup")
    p.add_argument("--trace-lines", action="append", default=[])
    p.add_argument("--report-imports", action="store_true")
    p.add_argument("--warm", action="append", default=[], help="a module of the tree to import before serving")
    p.add_argument("--plan")
    ns = p.parse_args(argv)
    if not ns.control and not (ns.socket and ns.tree):
        p.error("give --socket and --tree, or --control")
    return ns


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    server = Server(control=args.control)
    if args.control:
        # control records go to a descriptor of their own; whatever the code (or an import)
        # prints goes to stderr, never into the control channel
        ctl = os.dup(1)
        os.dup2(2, 1)
        server.say = lambda record: os.write(ctl, (json.dumps(record) + "\n").encode())
    done, failed = [], []
    if args.plan:
        with open(args.plan) as f:
            done, failed = preload(json.load(f))
    if args.control:
        server.say({"t": "ready", "pid": os.getpid(), "preloaded": done, "failed": failed})
    else:
        server.open_run({
            "id": "run", "socket": args.socket, "tree": args.tree, "copy_from": args.copy_from,
            "support": args.support, "setup": args.setup, "trace": args.trace_lines,
            "report_imports": args.report_imports, "warm": args.warm,
        })
        # before any code under test runs: the runner tells a candidate that could not start
        # (ours to fix) from one the code under test brought down (the submission's doing)
        os.write(1, b'{"t": "ready"}\n')
    try:
        server.loop()
    finally:
        server.shutdown()
    os._exit(0)
