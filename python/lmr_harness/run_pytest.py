"""lmr's pytest harness: runs pytest in-process and reports structured results
to the parent over an inherited file descriptor, never through printed text.

Protocol (one record per line on the results fd): ``<hmac-sha256 hex> <json>``.
The HMAC key is a random nonce the parent writes on stdin; it never appears in
the environment, argv or any file. Records carry a sequence number. Kinds:
hello, infra, collect_error, collected, start, result, junit, done.

Residual risk (documented on purpose): the code under test runs in this very
process. It cannot forge a record without the key, and the checks below catch
the usual tricks (patched pytest functions, extra plugins, os._exit, forged
files, printed summaries), but code that walks the interpreter's memory (gc,
frames, ctypes) can find the key or rewrite any object, including this module.
The sandbox bounds what such code can reach; it cannot make an in-process
verdict unforgeable. Graders must treat "passed" as "no forgery was detected".
"""
import sys

# The harness folder must not shadow modules of the tree under test, and the
# tree must not shadow what the harness imports: import everything first.
if sys.path and sys.path[0] and __file__.startswith(sys.path[0]):
    sys.path.pop(0)

import argparse
import faulthandler
import hashlib
import hmac
import json
import os
# at the top, not where the cap is set: a fork server's child and a fresh run then load the same modules
import resource
import signal
import time
import types

# In a fork server's child: the temporary folder the server's imports used (see fork_server.py).
SERVER_TEMPDIR = None

_write = os.write
_hmac_new = hmac.new
_sha256 = hashlib.sha256
_dumps = json.dumps
_exit = os._exit
_MAX_MESSAGE = 4000


class Channel:
    def __init__(self, fd, key):
        self._fd = fd
        self._key = key
        self._seq = 0

    def send(self, record):
        record = dict(record)
        record["seq"] = self._seq
        self._seq += 1
        body = _dumps(record, separators=(",", ":"), ensure_ascii=True)
        mac = _hmac_new(self._key, body.encode("ascii"), _sha256).hexdigest()
        view = memoryview((mac + " " + body + "\n").encode("ascii"))
        while len(view):
            view = view[_write(self._fd, view):]


def parse_args(argv):
    p = argparse.ArgumentParser(prog="run_pytest.py")
    p.add_argument("--results-fd", type=int)
    # The docker backend: a unix socket the parent listens on, bind-mounted into the container.
    p.add_argument("--results-socket")
    p.add_argument("--root", required=True)
    p.add_argument("--mount", required=True)
    p.add_argument("--per-test-s", type=float, default=0.0)
    p.add_argument("--as-bytes", type=int, default=0)
    p.add_argument("--allow-plugin", action="append", default=[])
    p.add_argument("--report-imports", action="store_true")
    # trusted runs only (verify): which lines of these tree files each test executes
    p.add_argument("--trace-lines", action="append", default=[])
    # run these test ids first, in this order (the rest keep pytest's order)
    p.add_argument("--first", action="append", default=[])
    p.add_argument("pytest_args", nargs=argparse.REMAINDER)
    ns = p.parse_args(argv)
    if (ns.results_fd is None) == (ns.results_socket is None):
        p.error("give one of --results-fd and --results-socket")
    if ns.pytest_args and ns.pytest_args[0] == "--":
        ns.pytest_args = ns.pytest_args[1:]
    return ns


def short(text):
    text = str(text or "")
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 20] + "\n...[truncated]"


def code_of(obj):
    fn = getattr(obj, "__func__", obj)
    return getattr(fn, "__code__", None)


def snapshot(targets):
    """(label, object, code) for each watched callable, to detect rebinding or __code__ swaps."""
    out = []
    for label, owner, name in targets:
        obj = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        out.append((label, owner, name, obj, code_of(obj)))
    return out


def changed(snap):
    bad = []
    for label, owner, name, obj, code in snap:
        now = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if now is not obj or code_of(now) is not code:
            bad.append(label)
    return bad


def watched_targets(pytest_modules, plugin_cls):
    runner, reports, python, main_mod, skipping, pluggy_hooks, pluggy_manager = pytest_modules
    t = [
        ("_pytest.runner.runtestprotocol", runner, "runtestprotocol"),
        ("_pytest.runner.call_and_report", runner, "call_and_report"),
        ("_pytest.runner.call_runtest_hook", runner, "call_runtest_hook"),
        ("_pytest.runner.CallInfo.from_call", runner.CallInfo, "from_call"),
        ("_pytest.runner.pytest_runtest_makereport", runner, "pytest_runtest_makereport"),
        ("_pytest.reports.TestReport.from_item_and_call", reports.TestReport, "from_item_and_call"),
        ("_pytest.reports.TestReport.__init__", reports.TestReport, "__init__"),
        ("_pytest.python.pytest_pyfunc_call", python, "pytest_pyfunc_call"),
        ("_pytest.python.Function.runtest", python.Function, "runtest"),
        ("_pytest.skipping.pytest_runtest_makereport", skipping, "pytest_runtest_makereport"),
        ("_pytest.main.pytest_runtestloop", main_mod, "pytest_runtestloop"),
        ("os._exit", os, "_exit"),
        ("os.write", os, "write"),
        ("hmac.new", hmac, "new"),
        ("json.dumps", json, "dumps"),
    ]
    for owner, name in ((pluggy_hooks, "HookCaller"), (pluggy_hooks, "_HookCaller")):
        cls = getattr(owner, name, None)
        if isinstance(cls, type) and "__call__" in cls.__dict__:
            t.append(("pluggy.HookCaller.__call__", cls, "__call__"))
    if "_hookexec" in pluggy_manager.PluginManager.__dict__:
        t.append(("pluggy.PluginManager._hookexec", pluggy_manager.PluginManager, "_hookexec"))
    for name in [n for n in plugin_cls.__dict__ if n.startswith("pytest_")] + ["_finish"]:
        t.append(("lmr harness " + name, plugin_cls, name))
    t.append(("lmr harness Channel.send", Channel, "send"))
    return t


class LineTracer:
    """Lines of the given tree files that one test executes (sys.settrace, this thread and new ones).

    Used by verify on the reference: a mutant of a line no test reaches cannot be killed,
    and a mutant need only run the tests that reach its line. Frames of other files
    return no local tracer, so library code runs untraced apart from call events.
    """

    def __init__(self, root, files):
        self.wanted = {os.path.realpath(os.path.join(root, f)): f for f in files}
        self.names = {}
        self.lines = {}

    def _rel(self, filename):
        rel = self.names.get(filename, False)
        if rel is False:
            rel = self.wanted.get(os.path.realpath(filename))
            self.names[filename] = rel
        return rel

    def _global(self, frame, event, arg):
        rel = self._rel(frame.f_code.co_filename)
        if rel is None:
            return None
        seen = self.lines.setdefault(rel, set())
        seen.add(frame.f_lineno)

        def local(frame, event, arg):
            if event == "line":
                seen.add(frame.f_lineno)
            return local

        return local

    def start(self):
        import threading

        self.lines = {}
        threading.settrace(self._global)
        sys.settrace(self._global)

    def stop(self):
        import threading

        sys.settrace(None)
        threading.settrace(None)
        return {f: sorted(v) for f, v in sorted(self.lines.items())}


def make_plugin(pytest, chan, args, err_fd):
    per_test = args.per_test_s
    mount = os.path.realpath(os.path.join(args.root, args.mount)) + os.sep
    pytest_dirs = tuple(
        os.path.dirname(os.path.realpath(m.__file__)) + os.sep
        for m in (sys.modules["_pytest"], sys.modules["pluggy"])
    )
    pytest_files = (os.path.realpath(sys.modules["pytest"].__file__),)
    harness_file = os.path.realpath(__file__)

    def module_name(plugin):
        if isinstance(plugin, type(sys)):
            return plugin.__name__
        return plugin.__module__ if isinstance(plugin, type) else type(plugin).__module__

    def plugin_file(plugin):
        f = getattr(plugin, "__file__", None) if isinstance(plugin, type(sys)) else None
        if f is None:
            f = getattr(sys.modules.get(module_name(plugin)), "__file__", None)
        return os.path.realpath(f) if f else None

    def allowed(name, plugin):
        f = plugin_file(plugin)
        if f is None:
            return False
        if f == harness_file or f in pytest_files or f.startswith(pytest_dirs) or f.startswith(mount):
            return True
        mod = module_name(plugin)
        return any(mod == a or mod.startswith(a + ".") or name == a for a in args.allow_plugin)

    tracer = LineTracer(args.root, args.trace_lines) if args.trace_lines else None
    first = list(args.first)

    def on_alarm(signum, frame):
        pytest.fail("lmr: test exceeded the per-test limit of %g s" % per_test, pytrace=False)

    class LmrPlugin:
        def __init__(self):
            self.results = {}
            self.xfail_marked = set()
            self.tampered = []
            self.collected = None

        def pytest_collectreport(self, report):
            if report.failed:
                chan.send({"t": "collect_error", "id": report.nodeid, "message": short(report.longreprtext)})

        def pytest_collection_modifyitems(self, session, config, items):
            if not first:
                return
            rank = {nodeid: i for i, nodeid in enumerate(first)}
            head = sorted((i for i in items if i.nodeid in rank), key=lambda i: rank[i.nodeid])
            items[:] = head + [i for i in items if i.nodeid not in rank]

        def pytest_collection_finish(self, session):
            items = session.items
            self.xfail_marked = {i.nodeid for i in items if i.get_closest_marker("xfail") is not None}
            self.collected = [i.nodeid for i in items]
            chan.send({"t": "collected", "ids": self.collected})

        def pytest_runtest_logstart(self, nodeid, location):
            self.results[nodeid] = {"status": "passed", "time_s": 0.0, "message": None, "raw_failed": False}
            chan.send({"t": "start", "id": nodeid})
            if tracer is not None:
                tracer.start()
            if per_test > 0:
                signal.signal(signal.SIGALRM, on_alarm)
                signal.setitimer(signal.ITIMER_REAL, per_test)
                # Where it hangs, for the log, if the parent has to kill it.
                faulthandler.dump_traceback_later(per_test + 1.0, exit=False, file=err_fd)

        def pytest_runtest_logreport(self, report):
            r = self.results.setdefault(
                report.nodeid, {"status": "passed", "time_s": 0.0, "message": None, "raw_failed": False}
            )
            r["time_s"] += float(getattr(report, "duration", 0.0) or 0.0)
            if report.failed and not hasattr(report, "wasxfail"):
                r["raw_failed"] = True
            when = report.when
            if report.failed:
                kind = "failed" if when == "call" else "error"
                if r["status"] in ("passed", "skipped") or kind == "error":
                    r["status"] = kind
                    r["message"] = short(report.longreprtext)
            elif report.skipped:
                if when == "call":
                    # A skip or xfail raised while the test body runs can come from the
                    # code under test itself; only a declared xfail marker excuses it.
                    if hasattr(report, "wasxfail") and report.nodeid in self.xfail_marked:
                        r["status"] = "skipped"
                        r["message"] = short("xfail: " + str(report.wasxfail))
                    else:
                        r["status"] = "failed"
                        r["message"] = short("skipped or xfailed from inside the test body: " + report.longreprtext)
                elif r["status"] == "passed":
                    r["status"] = "skipped"
                    lr = report.longrepr
                    r["message"] = short(lr[2] if isinstance(lr, tuple) and len(lr) == 3 else report.longreprtext)

        def pytest_runtest_logfinish(self, nodeid, location):
            if per_test > 0:
                signal.setitimer(signal.ITIMER_REAL, 0)
                faulthandler.cancel_dump_traceback_later()
            if tracer is not None:
                chan.send({"t": "lines", "id": nodeid, "files": tracer.stop()})
            r = self.results.get(nodeid) or {"status": "error", "time_s": 0.0, "message": "no report", "raw_failed": True}
            chan.send(dict(r, t="result", id=nodeid, time_s=round(r["time_s"], 6)))

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session, exitstatus):
            self._finish(session.config)

        def _finish(self, config):
            for name, plugin in config.pluginmanager.list_name_plugin():
                if plugin is not None and not allowed(name, plugin):
                    self.tampered.append("unexpected pytest plugin %r from %s" % (name, plugin_file(plugin)))

    return LmrPlugin


class ImportLog:
    """Which third-party top-level modules the tree's and the grader's own code import.

    Only imports made *from* files under the run root count (a library importing its
    own dependencies does not): that is what a task's environment must declare.
    Verify turns it on for trusted reference runs; it is off for submissions.
    """

    def __init__(self, root):
        self.root = os.path.realpath(root) + os.sep
        self.seen = {}
        self.stdlib = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names)

    def install(self):
        import builtins

        real = builtins.__import__
        log = self

        def logging_import(name, globals=None, locals=None, fromlist=(), level=0):
            if level == 0 and name:
                top = name.partition(".")[0]
                if top not in log.stdlib and top not in log.seen:
                    f = (globals or {}).get("__file__") or ""
                    # code compiled from a string names a pseudo-file ("<template>" for jinja2,
                    # "<string>"), which realpath would place in the working folder: not the tree's code
                    if f and not f.startswith("<") and os.path.realpath(f).startswith(log.root) and not log.optional(f):
                        log.seen[top] = os.path.relpath(os.path.realpath(f), log.root)
            return real(name, globals, locals, fromlist, level)

        builtins.__import__ = logging_import

    # The toolkit's grader support files try numpy/torch at import time and do without
    # them (ImportError): those imports say nothing about what the task needs. Imports
    # they make inside functions (decoding a recorded array) still count.
    SUPPORT_FILES = ("_lmr_replay.py", "_lmr_codec.py")

    @staticmethod
    def optional(f):
        if os.path.basename(f) not in ImportLog.SUPPORT_FILES:
            return False
        caller = sys._getframe(2)
        return caller.f_code.co_name == "<module>"

    def report(self, mount):
        out = []
        for top, importer in sorted(self.seen.items()):
            mod = sys.modules.get(top)
            origin, where = "missing", None
            if mod is not None:
                f = getattr(mod, "__file__", None)
                spec = getattr(mod, "__spec__", None)
                if f:
                    real = os.path.realpath(f)
                    where = real
                    if real.startswith(os.path.join(self.root, mount) + os.sep):
                        origin = "grader"
                    elif real.startswith(self.root):
                        origin = "tree"
                    else:
                        origin = "installed"
                elif spec is not None and spec.submodule_search_locations:
                    locs = [os.path.realpath(x) for x in spec.submodule_search_locations]
                    origin = "tree" if any(x.startswith(self.root) for x in locs) else "installed"
                    where = locs[0] if locs else None
                else:
                    origin = "stand-in"
            dist = None
            if origin == "installed":
                try:
                    from importlib import metadata

                    dist = (metadata.packages_distributions().get(top) or [None])[0]
                except Exception:
                    dist = None
            out.append({"module": top, "importer": importer, "origin": origin, "dist": dist, "file": short(where) if where else None})
        return out


def installed_elsewhere(name, tree):
    """Whether sys.path, less the run's tree, holds a module `name` (its parent as loaded now)."""
    from importlib.machinery import PathFinder

    parent, _, _ = name.rpartition(".")
    try:
        if parent:
            path = getattr(sys.modules.get(parent), "__path__", None)
            if path is None:
                return False
            spec = PathFinder.find_spec(name, list(path))
        else:
            spec = PathFinder.find_spec(name, [p for p in sys.path if p and not os.path.realpath(p).startswith(tree.rstrip(os.sep))])
    except Exception:
        return False
    return spec is not None and spec.origin not in (None, "") and not os.path.realpath(spec.origin).startswith(tree)


def loaded_modules(root, own):
    """What a fork server must do before it forks so that its children start where this run's
    tests started, less the tree's and the grader's own code:

    - "modules": every module loaded from a file under a folder of sys.path outside this
      run's folders, in the order it was first imported. The server imports them once, so a
      child does not import a package's lazily loaded parts (transformers' models, torch's
      compiler) all over again.
    - "blocked": names the run left mapped to None (a conftest's `sys.modules["torch"] = None`):
      the server maps them so too before it imports anything, as the conftest did here.
    - "stand_ins": names that were not the installed module of that name here: the tree's and
      the grader's own modules, and module objects without a file (a conftest's fake) where
      such a module is installed. The server maps them to None while it imports, so that
      nothing it preloads binds an installed package where this run's code had its own; the
      child imports them as this run did.

    Aliases (a name that is not the module's own) and files outside sys.path (code a library
    wrote into a temporary folder) are left out."""
    tree = os.path.realpath(root) + os.sep
    harness_dir = os.path.dirname(os.path.realpath(__file__)) + os.sep
    skip = [os.path.realpath(d) + os.sep for d in own] + [harness_dir]
    # where a library wrote code to import (torch's remote-module template) at the server's import
    if SERVER_TEMPDIR:
        skip.append(os.path.realpath(SERVER_TEMPDIR) + os.sep)
    path_dirs = []
    for p in sys.path:
        if p and os.path.isdir(p):
            d = os.path.realpath(p) + os.sep
            if not any(d.startswith(x) for x in skip):
                path_dirs.append(d)
    modules, blocked, stand_ins = [], [], []
    for name, mod in list(sys.modules.items()):
        if name in ("__main__", "__mp_main__"):
            continue
        if mod is None:
            blocked.append(name)
            continue
        f = getattr(mod, "__file__", None) if isinstance(mod, types.ModuleType) else None
        if not isinstance(f, str) or not os.path.isabs(f):
            # no file (torch.ops names a relative one). A package's own file-less parts
            # (torch._VF, six.moves) hang under a module that has one; a fake matters only
            # where an installed module of its name exists, which the server would bind instead
            parts = name.split(".")
            if any(isinstance(getattr(sys.modules.get(".".join(parts[:i])), "__file__", None), str) for i in range(1, len(parts))):
                continue
            if installed_elsewhere(name, tree):
                stand_ins.append(name)
            continue
        real = os.path.realpath(f)
        if real.startswith(tree):
            # the tree's and the grader's modules (a fake loaded from a grader file among them):
            # in the server such a name would find an installed module, or nothing
            stand_ins.append(name)
            continue
        if getattr(mod, "__name__", None) != name or any(real.startswith(d) for d in skip):
            continue
        if not any(real.startswith(d) for d in path_dirs):
            continue
        modules.append(name)
    return {"modules": modules, "blocked": blocked, "stand_ins": stand_ins}


def main(argv=None, key=None):
    """One run. `argv`/`key` are given by the fork server (python/lmr_harness/fork_server.py),
    which has already put /dev/null on stdin; a plain run reads the key from stdin."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if key is None:
        key = sys.stdin.buffer.readline(512).strip()
        os.close(0)
        os.open(os.devnull, os.O_RDONLY)
    if len(key) < 32:
        sys.stderr.write("lmr harness: no results key on stdin\n")
        _exit(97)
    results_fd = args.results_fd
    if args.results_socket:
        import socket

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(args.results_socket)
        results_fd = sock.detach()
    os.set_inheritable(results_fd, False)
    chan = Channel(results_fd, key)
    del key
    chan.send({"t": "hello", "pid": os.getpid(), "python": sys.version.split()[0], "executable": sys.executable})

    if args.as_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (args.as_bytes, args.as_bytes))
    err_fd = os.fdopen(os.dup(2), "w", buffering=1)
    os.set_inheritable(err_fd.fileno(), False)
    try:
        import pytest
        import _pytest.main
        import _pytest.python
        import _pytest.reports
        import _pytest.runner
        import _pytest.skipping
        import pluggy._hooks
        import pluggy._manager
    except ImportError as e:
        chan.send({"t": "infra", "reason": "pytest is not importable by %s: %s" % (sys.executable, e)})
        _exit(3)

    junit_fd = None
    pytest_args = list(args.pytest_args)
    if hasattr(os, "memfd_create"):
        junit_fd = os.memfd_create("lmr-junit", 0)
        pytest_args.append("--junitxml=/proc/self/fd/%d" % junit_fd)

    root = os.path.realpath(args.root)
    sys.path.insert(0, root)
    os.environ["PYTHONPATH"] = root
    os.chdir(root)

    imports = None
    env_before = dict(os.environ)
    if args.report_imports:
        imports = ImportLog(root)
        imports.install()
    LmrPlugin = make_plugin(pytest, chan, args, err_fd)
    mods = (_pytest.runner, _pytest.reports, _pytest.python, _pytest.main, _pytest.skipping, pluggy._hooks, pluggy._manager)
    snap = snapshot(watched_targets(mods, LmrPlugin))
    plugin = LmrPlugin()
    try:
        code = int(pytest.main(pytest_args, plugins=[plugin]))
    except BaseException as e:  # the code under test may raise anything, SystemExit included
        code = 3
        err_fd.write("lmr harness: pytest.main raised %r\n" % (e,))
    tampered = changed(snap) + plugin.tampered

    if junit_fd is not None:
        os.lseek(junit_fd, 0, os.SEEK_SET)
        chunks = []
        while True:
            b = os.read(junit_fd, 1 << 16)
            if not b:
                break
            chunks.append(b)
        chan.send({"t": "junit", "xml": b"".join(chunks).decode("utf-8", "replace")})
    if imports is not None:
        # what the grader's conftest (or a test) left changed in the environment: a fork server
        # must import its modules under the same variables (joblib reads JOBLIB_MULTIPROCESSING
        # when it is first imported, which in a fresh run is after the conftest set it)
        # A value inside this run's own folders (torch 2 sets TORCHINDUCTOR_CACHE_DIR under
        # TMPDIR at import) means nothing to another process: a server started with it pointed
        # its children at a folder that was gone, or that they may not write.
        own = [d for d in {os.path.dirname(root), env_before.get("HOME"), env_before.get("TMPDIR")} if d and d != "/"]
        env_set = {k: v for k, v in os.environ.items() if env_before.get(k) != v and not any(d in v for d in own)}
        env_unset = sorted(k for k in env_before if k not in os.environ)
        chan.send({"t": "imports", "modules": imports.report(args.mount), "env": {"set": env_set, "unset": env_unset}, "server": loaded_modules(root, own)})
    chan.send({"t": "done", "exit": code, "n_results": len(plugin.results), "tampered": tampered})
    for stream in (sys.stdout, sys.stderr, err_fd):
        try:
            stream.flush()
        except Exception:
            pass
    _exit(code)


if __name__ == "__main__":
    main()
