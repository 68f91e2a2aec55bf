"""lmr's fork server: imports pytest and the heavy installed modules a task's tests
need once, then forks one child per test run; each child is an ordinary harness
run (run_pytest.main) with its own tree, results socket, key and limits.

For trusted runs only (verify: stub, alternatives, mutants). Children share what the
server imported, so code under test could leave traces in a module object only if it
ran in the server, and it never does; but children are not isolated from each other by
the sandbox (one bwrap around the server), so submissions never use this path.

Control protocol, one JSON object per line. On stdin: {"id", "argv", "key", "env",
"log", "timeout_s"}. On stdout: {"t": "ready", "preloaded": [...], "failed": [...]},
then per job {"t": "started", "id", "pid"} and {"t": "exit", "id", "code", "signal",
"timed_out"}. Verdicts never travel here: a child reports over its own signed channel.
"""
import sys

if sys.path and sys.path[0] and __file__.startswith(sys.path[0]):
    sys.path.pop(0)

import argparse
import importlib
import importlib.util
import json
import os
import signal
import threading

_here = os.path.dirname(os.path.realpath(__file__))
_spec = importlib.util.spec_from_file_location("lmr_run_pytest", os.path.join(_here, "run_pytest.py"))
harness = importlib.util.module_from_spec(_spec)
# registered, so the harness's own plugin check finds the file its plugin class comes from
sys.modules["lmr_run_pytest"] = harness
_spec.loader.exec_module(harness)

_out_lock = threading.Lock()
_out = os.fdopen(os.dup(1), "w", buffering=1)
_jobs = {}
_jobs_lock = threading.Lock()


def say(record):
    with _out_lock:
        _out.write(json.dumps(record) + "\n")
        _out.flush()


def preload(names):
    done, failed = [], []
    for name in ["pytest", "_pytest.main", "_pytest.python", "_pytest.runner", "pluggy"] + names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
            done.append(name)
        except BaseException as e:  # a module that fails here fails in the child too, where it is reported
            failed.append("%s: %s" % (name, e))
    # pytest shows a failure's source through inspect.getmodule, which maps every loaded
    # module's file the first time it is asked: map them once here, so each child maps only
    # the modules it adds (measured: 1-4 % of a failing child's CPU, 10-25 ms)
    try:
        import inspect

        inspect.getmodule(preload, os.path.join(os.sep, "nonexistent", "lmr.py"))
    except Exception:
        pass
    return done, failed


def run_child(job):
    """In the forked child: become a plain harness run."""
    try:
        os.setsid()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd in (log, null):
            os.close(fd)
        os.environ.update(job.get("env") or {})
        # tempfile remembers the folder it chose in the server (torch chose one at import):
        # the child's temporary files belong in its own TMPDIR, as a fresh run's do
        tf = sys.modules.get("tempfile")
        if tf is not None:
            harness.SERVER_TEMPDIR = tf.tempdir
            tf.tempdir = None
        argv = list(job["argv"])
        # the address-space cap counts what the server already mapped (torch alone maps gigabytes): add it
        if "--as-bytes" in argv:
            i = argv.index("--as-bytes") + 1
            argv[i] = str(int(argv[i]) + mapped_bytes())
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        harness.main(argv, job["key"].encode("ascii"))
    except BaseException as e:
        try:
            os.write(2, ("lmr fork server: the child failed before the harness ran: %r\n" % (e,)).encode())
        except Exception:
            pass
    os._exit(97)


def mapped_bytes():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def reap():
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            threading.Event().wait(0.05)
            continue
        with _jobs_lock:
            job = _jobs.pop(pid, None)
        if job is None:
            continue
        job["timer"].cancel()
        code = os.waitstatus_to_exitcode(status)
        say({
            "t": "exit",
            "id": job["id"],
            "code": code if code >= 0 else None,
            "signal": signal.Signals(-code).name if code < 0 else None,
            "timed_out": job["timed_out"],
        })


def kill_late(pid, job):
    job["timed_out"] = True
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main():
    p = argparse.ArgumentParser(prog="fork_server.py")
    p.add_argument("--preload", action="append", default=[])
    p.add_argument("--plan", help='a JSON file: {"modules": [...] imported in order after --preload, "blocked": [...] mapped to None for good, "stand_ins": [...] mapped to None while importing}')
    args = p.parse_args()
    names = list(args.preload)
    plan = {}
    if args.plan:
        with open(args.plan) as f:
            plan = json.load(f)
        names += plan.get("modules") or []
    # a module that prints while it is imported must not write into the control channel
    os.dup2(2, 1)
    # as the first run's conftest left them: a name it blocked stays blocked; a name that was
    # its own module or a fake there must not bind an installed package while we import
    for name in (plan.get("blocked") or []) + (plan.get("stand_ins") or []):
        sys.modules.setdefault(name, None)
    done, failed = preload(names)
    for name in plan.get("stand_ins") or []:
        if sys.modules.get(name, 0) is None:
            del sys.modules[name]
    threading.Thread(target=reap, daemon=True).start()
    say({"t": "ready", "preloaded": done, "failed": failed, "pid": os.getpid()})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        job = json.loads(line)
        with _jobs_lock:
            pid = os.fork()
            if pid == 0:
                run_child(job)
            entry = {"id": job["id"], "timed_out": False}
            entry["timer"] = threading.Timer(float(job.get("timeout_s") or 600), kill_late, (pid, entry))
            entry["timer"].daemon = True
            entry["timer"].start()
            _jobs[pid] = entry
        say({"t": "started", "id": job["id"], "pid": pid})
    # stdin closed: the parent is done with us; take the children along
    with _jobs_lock:
        pids = list(_jobs)
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os._exit(0)


if __name__ == "__main__":
    main()
