"""lmr's pytest harness: runs pytest in-process and reports structured results
to the parent over an inherited file descriptor, never through printed text.

Protocol (one record per line on the results fd): ``<hmac-sha256 hex> <json>``.
The HMAC key is a random nonce the parent writes on stdin; it never appears in
the environment, argv or any file. Records carry a sequence number. Kinds:
hello, infra, collect_error, collected, start, result, junit, done.

This process is the *oracle*: it never imports the code under test. The tests reach
that code through lmr_bridge (the toolkit's python folder is on sys.path), which talks
to the *candidate*, a process of its own in a sandbox of its own that holds the
workspace and nothing of the grader (--bridge names its socket). What the candidate
sends back is data, decoded strictly; the key, the channel, the fixtures and every
assertion stay here. The checks below (patched pytest functions, extra plugins,
os._exit, a record count that does not add up) remain as a second line, against grader
code that misbehaves, not against the submission, which cannot reach this process.
"""
import sys

# The harness folder must not shadow modules of the tree under test, and the
# tree must not shadow what the harness imports: import everything first.
if sys.path and sys.path[0] and __file__.startswith(sys.path[0]):
    sys.path.pop(0)

import os as _os

# lmr_bridge (what the tests use to reach the candidate) and its codec live beside this folder
_TOOLKIT = _os.path.dirname(_os.path.dirname(_os.path.realpath(__file__)))
if _TOOLKIT not in sys.path:
    sys.path.append(_TOOLKIT)

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
    # the candidate's socket: where the code under test is served from (lmr_bridge)
    p.add_argument("--bridge")
    p.add_argument("--bridge-timeout", type=float, default=120.0)
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

    traced = bool(args.trace_lines)
    from lmr_bridge import oracle as bridge
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
            # the candidate imports the code under test now, outside every test's clock
            if args.bridge and items:
                bridge.candidate.warm()

        def pytest_runtest_logstart(self, nodeid, location):
            self.results[nodeid] = {"status": "passed", "time_s": 0.0, "message": None, "raw_failed": False}
            chan.send({"t": "start", "id": nodeid})
            bridge.candidate.test = nodeid
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
            if traced:
                chan.send({"t": "lines", "id": nodeid, "files": bridge.candidate.take_lines(nodeid)})
            r = self.results.get(nodeid) or {"status": "error", "time_s": 0.0, "message": "no report", "raw_failed": True}
            failures = [f for f in bridge.candidate.import_failures if f.get("test") == nodeid]
            if failures and r["status"] == "failed":
                # the code under test did not load: an error of the run, not a failed check
                first = failures[0]
                r = dict(r, status="error", message=short("the code under test could not be imported in the candidate: %s" % first.get("message", "")))
                chan.send({"t": "candidate_import_error", "id": nodeid, "module": first.get("module"), "missing": first.get("missing"), "message": first.get("message")})
            bridge.candidate.test = None
            chan.send(dict(r, t="result", id=nodeid, time_s=round(r["time_s"], 6)))

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session, exitstatus):
            self._finish(session.config)

        def _finish(self, config):
            for name, plugin in config.pluginmanager.list_name_plugin():
                if plugin is not None and not allowed(name, plugin):
                    self.tampered.append("unexpected pytest plugin %r from %s" % (name, plugin_file(plugin)))

    return LmrPlugin


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
    from lmr_bridge import introspect
    from lmr_bridge import oracle as bridge

    if args.bridge:
        bridge.configure(args.bridge, args.bridge_timeout, trace=bool(args.trace_lines))
    os.chdir(root)

    imports = None
    env_before = dict(os.environ)
    if args.report_imports:
        imports = introspect.ImportLog(root)
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
        record = {"t": "imports", "modules": imports.report(args.mount), "env": {"set": env_set, "unset": env_unset}, "server": introspect.loaded_modules(root, own, SERVER_TEMPDIR)}
        # the tree's imports happened in the candidate: it reports them, and what a server of
        # candidates must preload, on request (trusted runs only ask)
        try:
            cand = bridge.candidate.report()
        except BaseException as e:
            cand = None
            err_fd.write("lmr harness: the candidate's report failed: %r\n" % (e,))
        if isinstance(cand, dict) and cand:
            seen = {m["module"] for m in record["modules"]}
            record["modules"] += [m for m in cand.get("imports") or [] if isinstance(m, dict) and m.get("module") not in seen]
            record["candidate_env"] = cand.get("env")
            record["candidate_server"] = cand.get("server")
        chan.send(record)
    chan.send({"t": "done", "exit": code, "n_results": len(plugin.results), "tampered": tampered})
    for stream in (sys.stdout, sys.stderr, err_fd):
        try:
            stream.flush()
        except Exception:
            pass
    _exit(code)


if __name__ == "__main__":
    main()
