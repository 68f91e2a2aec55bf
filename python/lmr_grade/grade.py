"""lmr's grader without Node: what an exported Harbor task's tests/test.sh and the Inspect
task's scorer run inside the task's container to grade the agent's workspace.

    python3 grade.py --workspace DIR [--kit DIR] [--out FILE] [--reward-dir DIR] [--interpreter PATH]

The kit (this file's folder unless --kit) holds what `lmr export` wrote for one task:
grade.json (targets, time limits, the candidate's files, the harness's argv with
placeholders, the verified test set), grader/ (the task's tests and fixtures), workspace/
(the masked workspace as built) and toolkit/ (lmr's python/ harness and bridge, and for
node:test tasks its node/ harness).

What runs is what `lmr eval` runs: a candidate process (python/lmr_bridge, or the Node
harness's candidate.mjs) that alone imports the code under test, on a fresh copy of the
masked workspace with only the target files taken from DIR; and the oracle (the toolkit's
run_pytest.py, or node-test-main.mjs) that runs the tests and reports signed records on a
pipe with a key it reads from stdin. The verdict is decided from those records, as
src/runner/verdict.ts decides it, and checked against the set of tests lmr verified
(src/evaluate/test-set.ts); a change to either rule must be made in both places.

What it does not give (docs/harnesses.md): lmr's sandboxes. Both processes run in the
container the agent used; when run as root, the candidate runs as an unprivileged user
(lmr's image user, uid 10001) that cannot read the kit, so the code under test cannot read
the fixtures or the key, but what the agent left in the container (its own Python, pytest,
site-packages) is what runs.
"""
import argparse
import hashlib
import hmac
import json
import os
import pwd
import resource
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

PER_TEST_GRACE_S = 3
READY_TIMEOUT_S = 120
KILL_GRACE_S = 2
STATUSES = ("passed", "failed", "error", "skipped")
PYTEST_EXIT = {
    2: "pytest was interrupted (2)",
    3: "pytest hit an internal error (3)",
    4: "pytest rejected its arguments or a grader conftest failed to load (4)",
    5: "pytest collected no tests (5)",
}
CANDIDATE_USER = "lmr"


# ---------------------------------------------------------------- the scratch copy (src/runner/scratch.ts)


def is_junk(name, is_dir):
    if is_dir:
        return name in (".git", "__pycache__")
    return name == ".git" or name.endswith((".pyc", ".pyo"))


def is_hijack(name):
    return name in ("conftest.py", "pytest.ini", ".pytest.ini", "sitecustomize.py", "usercustomize.py") or name.endswith(".pth")


def copy_tree(src, dst, drop_hijack, removed, rel=""):
    os.makedirs(dst, exist_ok=True)
    for e in os.scandir(src):
        r = rel + "/" + e.name if rel else e.name
        to = os.path.join(dst, e.name)
        if e.is_dir(follow_symlinks=False):
            if not is_junk(e.name, True):
                copy_tree(e.path, to, drop_hijack, removed, r)
        elif is_junk(e.name, False):
            continue
        elif drop_hijack and is_hijack(e.name):
            removed.append(r)
        elif e.is_symlink():
            os.symlink(os.readlink(e.path), to)
        elif e.is_file(follow_symlinks=False):
            shutil.copyfile(e.path, to)
            os.chmod(to, stat.S_IMODE(os.lstat(e.path).st_mode) | 0o644)


def plain_file(root, rel):
    """The submission's file at REL, or why it cannot be taken (a link anywhere on the way, not a file)."""
    cur = root
    parts = rel.split("/")
    for i, part in enumerate(parts):
        cur = os.path.join(cur, part)
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            return None, None
        if stat.S_ISLNK(st.st_mode):
            return None, "%s is a symbolic link" % "/".join(parts[: i + 1])
    if not stat.S_ISREG(st.st_mode):
        return None, "%s is not a regular file" % rel
    with open(cur, "rb") as f:
        return f.read(), None


def hash_tree(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            p = os.path.join(dirpath, name)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


# ---------------------------------------------------------------- the results channel (src/runner/channel.ts)


class Reader:
    def __init__(self, key):
        self.key = key
        self.seq = 0
        self.seen = set()
        self.buf = b""
        self.s = {"hello": None, "infra": None, "collect_errors": [], "collected": None, "running": None, "results": [], "junit": None,
                  "candidate_import_errors": [], "done": None, "problems": []}
        self.lock = threading.Lock()
        self.on_record = lambda kind: None

    def problem(self, msg):
        if len(self.s["problems"]) < 20:
            self.s["problems"].append(msg)

    def feed(self, data):
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            self.read_line(line.decode("utf-8", "replace"))

    def end(self):
        if self.buf:
            self.problem("results channel ended in the middle of a record")
        self.buf = b""

    def read_line(self, line):
        mac, _, body = line.partition(" ")
        want = hmac.new(self.key, body.encode("ascii", "replace"), hashlib.sha256).hexdigest()
        if len(mac) != 64 or not hmac.compare_digest(mac, want):
            self.problem("unauthenticated record on the results channel: %r" % line[:120])
            return
        try:
            rec = json.loads(body)
        except ValueError:
            self.problem("authenticated record is not JSON")
            return
        with self.lock:
            if rec.get("seq") != self.seq:
                self.problem("record out of sequence: expected %d, got %r" % (self.seq, rec.get("seq")))
            self.seq = rec["seq"] + 1 if isinstance(rec.get("seq"), int) else self.seq + 1
            if self.s["done"] is not None:
                self.problem("record %s after done" % rec.get("t"))
            self.apply(rec)
        self.on_record(rec.get("t"))

    def apply(self, rec):
        s = self.s
        t = rec.get("t")
        text = lambda v: v if isinstance(v, str) else ""
        if t == "hello":
            s["hello"] = {"pid": rec.get("pid"), "python": text(rec.get("python"))}
        elif t == "infra":
            s["infra"] = text(rec.get("reason"))
        elif t == "collect_error":
            s["collect_errors"].append({"id": text(rec.get("id")), "message": text(rec.get("message"))})
        elif t == "collected":
            if s["collected"] is not None:
                self.problem("collection announced twice")
            s["collected"] = [str(i) for i in rec.get("ids", [])] if isinstance(rec.get("ids"), list) else []
        elif t == "start":
            s["running"] = text(rec.get("id"))
        elif t == "result":
            tid = text(rec.get("id"))
            if tid in self.seen:
                self.problem("two results for %s" % tid)
            self.seen.add(tid)
            status = rec.get("status") if rec.get("status") in STATUSES else "error"
            s["results"].append({"id": tid, "status": status, "time_s": rec.get("time_s") if isinstance(rec.get("time_s"), (int, float)) else 0,
                                 "message": rec.get("message") if isinstance(rec.get("message"), str) else None, "raw_failed": rec.get("raw_failed") is True})
            if s["running"] == tid:
                s["running"] = None
        elif t == "junit":
            s["junit"] = text(rec.get("xml"))
        elif t == "candidate_import_error":
            s["candidate_import_errors"].append({"id": text(rec.get("id")), "message": text(rec.get("message"))})
        elif t == "done":
            s["done"] = {"exit": rec.get("exit"), "n_results": rec.get("n_results"), "tampered": [str(x) for x in rec.get("tampered", [])]}
        elif t in ("lines", "imports"):
            pass
        else:
            self.problem("unknown record kind %r" % t)


# ---------------------------------------------------------------- the verdict (src/runner/verdict.ts, src/evaluate/test-set.ts)


def counts_of(tests):
    c = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    for t in tests:
        c["errors" if t["status"] == "error" else t["status"]] += 1
    return c


def decide(s, f):
    tests = [dict({"id": r["id"], "status": r["status"], "time_s": r["time_s"]}, **({"message": r["message"]} if r["message"] else {})) for r in s["results"]]
    counts = counts_of(tests)

    def v(status, reason=None):
        return {"verdict": status, "reason": reason, "tests": tests, "counts": counts}

    exit_text = "signal %s" % f["signal"] if f.get("signal") else "exit code %s" % f.get("exit")
    if f.get("candidate_start_error"):
        return v("infra", f["candidate_start_error"])
    if f.get("wall_timeout_s") is not None:
        at = " (while running %s)" % s["running"] if s["running"] else ""
        return v("timeout", "the run exceeded its wall limit of %s s%s; the process group was killed" % (f["wall_timeout_s"], at))
    if f.get("per_test_killed"):
        k = f["per_test_killed"]
        return v("timeout", "test %s ran past the per-test limit of %s s and did not stop; the run was killed" % (k["id"], k["limit_s"]))
    if not s["hello"]:
        tail = "\n".join(f.get("stderr_tail", "").strip().split("\n")[-5:])
        return v("infra", "the test process never started the lmr harness (%s)%s" % (exit_text, ": " + tail if tail else ""))
    if s["infra"]:
        return v("infra", s["infra"])
    if s["problems"]:
        return v("error", "results channel not trusted: " + "; ".join(s["problems"]))
    if f.get("grader_modified"):
        return v("error", "grader files were modified during the run: " + ", ".join(f["grader_modified"][:5]))
    done = s["done"]
    if not done:
        when = "while running %s" % s["running"] if s["running"] else ("between tests" if s["collected"] is not None else "before collection finished")
        return v("error", "the test process ended (%s) without reporting its results (%s)" % (exit_text, when))
    if f.get("signal") or f.get("exit") != done["exit"]:
        return v("error", "the process %s disagrees with the exit status pytest reported (%s)" % (exit_text, done["exit"]))
    if done["tampered"]:
        return v("error", "pytest or the harness was tampered with during the run: " + "; ".join(done["tampered"]))
    if s["collect_errors"]:
        first = s["collect_errors"][0]
        last = (first["message"].strip().split("\n") or [""])[-1]
        return v("error", "collection failed in %d place(s), first %s: %s" % (len(s["collect_errors"]), first["id"] or "<root>", last))
    if s["candidate_import_errors"]:
        first = s["candidate_import_errors"][0]
        line = (first["message"].strip().split("\n") or [""])[0]
        return v("error", "the code under test could not be imported (%d test(s)), first in %s: %s" % (len(s["candidate_import_errors"]), first["id"], line))
    exit_problem = PYTEST_EXIT.get(done["exit"])
    if s["collected"] is None:
        return v("error", exit_problem or "pytest ended before announcing what it collected")
    if not s["collected"]:
        return v("error", "no tests were collected")
    got = {r["id"] for r in s["results"]}
    missing = [i for i in s["collected"] if i not in got]
    extra = [i for i in got if i not in s["collected"]]
    if missing or extra or done["n_results"] != len(s["results"]):
        what = "no result for " + ", ".join(missing[:3]) if missing else "unexpected results " + ", ".join(extra[:3])
        return v("error", "%s: %d of %d collected tests reported, %s" % (exit_problem or "results are incomplete", len(s["results"]), len(s["collected"]), what))
    raw_failed = any(r["raw_failed"] for r in s["results"])
    if done["exit"] != (1 if raw_failed else 0):
        return v("error", "pytest exit status %s disagrees with the reported results (%s failures)" % (done["exit"], "some" if raw_failed else "no"))
    if counts["failed"] or counts["errors"]:
        bad = next(t for t in tests if t["status"] in ("failed", "error"))
        return v("failed", "%d failed, %d errors of %d; first: %s" % (counts["failed"], counts["errors"], len(tests), bad["id"]))
    if counts["passed"] == 0:
        return v("error", "no test passed (%d skipped)" % counts["skipped"])
    return v("passed")


def enforce_verified(out, verified):
    if not verified or out["verdict"] not in ("passed", "failed"):
        return out
    want = set(verified["tests"])
    may_skip = set(verified.get("skipped", []))
    got = {t["id"] for t in out["tests"]}
    missing = [i for i in verified["tests"] if i not in got]
    added = sorted(i for i in got if i not in want)
    skipped = sorted(t["id"] for t in out["tests"] if t["status"] == "skipped" and t["id"] not in may_skip)
    if not (missing or added or skipped):
        return out

    def lst(ids):
        return ", ".join(ids[:5]) + (", … (%d in all)" % len(ids) if len(ids) > 5 else "")

    parts = [p for p in ("missing " + lst(missing) if missing else "", "added " + lst(added) if added else "", "skipped " + lst(skipped) if skipped else "") if p]
    return dict(out, verdict="error", reason="the tests graded are not the verified set (%d tests): %s" % (len(verified["tests"]), "; ".join(parts)))


# ---------------------------------------------------------------- running it (src/runner/run-tests.ts, supervise.ts)


def substitute(argv, values):
    out = []
    for a in argv:
        for k, val in values.items():
            a = a.replace("{" + k + "}", val)
        out.append(a)
    return out


def avx2_pins(pins):
    """lmr's kernel pins (src/runner/limits.ts kernelPinsFor), where this CPU has AVX2 and FMA."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
    except OSError:
        flags = []
    import platform
    return pins if platform.machine() in ("x86_64", "AMD64") and "avx2" in flags and "fma" in flags else {}


def drop_to(user, memory_bytes):
    def pre():
        os.setsid()
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        if user is not None:
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
    return pre


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def drain(stream, sink, limit=64 * 1024):
    def run():
        for chunk in iter(lambda: stream.read1(4096) if hasattr(stream, "read1") else stream.read(4096), b""):
            sink.append(chunk)
            while sum(len(c) for c in sink) > limit and len(sink) > 1:
                sink.pop(0)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def grade(kit, workspace, interpreter=None, drop_user=None):
    with open(os.path.join(kit, "grade.json"), encoding="utf-8") as f:
        spec = json.load(f)
    python = interpreter or spec["interpreter"]
    scratch = tempfile.mkdtemp(prefix="lmr-grade-")
    os.chmod(scratch, 0o711)
    log = []
    try:
        root = os.path.join(scratch, "tree")
        removed = []
        copy_tree(os.path.join(kit, "workspace"), root, True, removed)
        if removed:
            log.append("lmr: removed from the tree copy: %s" % ", ".join(removed))
        taken = []
        for rel in spec["targets"]:
            content, why = plain_file(workspace, rel)
            if why:
                return {"verdict": "invalid", "reason": "target file %s" % why, "tests": [], "counts": counts_of([]), "log": ""}
            if content is not None:
                with open(os.path.join(root, rel), "wb") as f:
                    f.write(content)
                taken.append(rel)
        oracle_root = os.path.join(scratch, "oracle")
        mount_dir = os.path.join(oracle_root, *spec["mount"].split("/"))
        copy_tree(os.path.join(kit, "grader"), mount_dir, False, [])
        os.chmod(oracle_root, 0o700)
        support = os.path.join(scratch, "support")
        bridge = os.path.join(scratch, "bridge")
        os.makedirs(support)
        os.makedirs(bridge)
        for rel in spec.get("candidate_files", []):
            shutil.copyfile(os.path.join(kit, "grader", rel), os.path.join(support, os.path.basename(rel)))
        for d in (support, bridge):
            os.chmod(d, 0o755)
        if drop_user is not None:
            for dirpath, dirnames, filenames in os.walk(root):
                for n in [dirpath] + [os.path.join(dirpath, x) for x in dirnames + filenames]:
                    os.lchown(n, drop_user.pw_uid, drop_user.pw_gid)
            os.chown(bridge, drop_user.pw_uid, drop_user.pw_gid)
        home = tempfile.mkdtemp(prefix="lmr-grade-home-")
        if drop_user is not None:
            os.chown(home, drop_user.pw_uid, drop_user.pw_gid)
        if drop_user is not None:
            # the candidate's user may run the toolkit, never read the grader or this kit's own copy of it
            os.chmod(kit, 0o711)
            os.chmod(os.path.join(kit, "grader"), 0o700)
            os.chmod(os.path.join(kit, "grade.json"), 0o600)
        before = hash_tree(mount_dir)
        toolkit = os.path.join(kit, "toolkit")
        values = {"toolkit": toolkit, "root": root, "oracle_root": oracle_root, "mount_dir": mount_dir, "support": support,
                  "socket": os.path.join(bridge, "candidate.sock"), "python": python}
        memory = int(spec.get("memory_mb", 4096)) * 1024 * 1024
        env = dict(spec["env"])
        env.update(avx2_pins(spec.get("kernel_pins", {})))
        if interpreter:
            env["PATH"] = os.path.dirname(os.path.abspath(python)) + os.pathsep + env["PATH"] if os.sep in python else env["PATH"] + os.pathsep + os.environ.get("PATH", "")

        # the candidate: the only process that imports the code under test
        cand_env = {k: v.replace("{home}", home) for k, v in env.items()}
        cand = subprocess.Popen([python] + substitute(spec["candidate_argv"], values), cwd=root, env=cand_env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=drop_to(drop_user, memory))
        cand_err = []
        drain(cand.stderr, cand_err)
        ready = {"ok": False}
        cand_out = []

        def watch_ready():
            for line in iter(cand.stdout.readline, b""):
                if not ready["ok"] and line.startswith(b'{"t": "ready"'):
                    ready["ok"] = True
                    continue
                cand_out.append(line)
        rt = threading.Thread(target=watch_ready, daemon=True)
        rt.start()
        t0 = time.monotonic()
        while not ready["ok"] and cand.poll() is None and time.monotonic() - t0 < READY_TIMEOUT_S:
            time.sleep(0.05)
        facts = {"exit": None, "signal": None, "stderr_tail": ""}
        if not ready["ok"]:
            time.sleep(0.2)
            tail = b"".join(cand_err).decode("utf-8", "replace").strip().split("\n")[-5:]
            facts["candidate_start_error"] = "the candidate process did not start (%s)%s" % (
                "exit code %s" % cand.returncode if cand.poll() is not None else "no answer in %d s" % READY_TIMEOUT_S, ": " + "\n".join(tail) if tail else "")
            kill_group(cand)
            reader = Reader(b"")
            out = decide(reader.s, facts)
            out["log"] = "\n".join(log)
            return out

        # the oracle: pytest (or node:test) and the tests, with the key on stdin and the records on a pipe
        key = secrets.token_hex(32)
        reader = Reader(key.encode("ascii"))
        r, w = os.pipe()
        values["results_fd"] = str(w)
        o_home = tempfile.mkdtemp(prefix="lmr-grade-ohome-")
        oracle = subprocess.Popen([python] + substitute(spec["oracle_argv"], values), cwd=oracle_root, env={k: v.replace("{home}", o_home) for k, v in env.items()},
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(w,), preexec_fn=drop_to(None, memory))
        os.close(w)
        o_out, o_err = [], []
        drain(oracle.stdout, o_out)
        drain(oracle.stderr, o_err)
        oracle.stdin.write((key + "\n").encode("ascii"))
        oracle.stdin.close()
        timers = {"wall": None, "test": None, "test_id": None}
        per_test = spec.get("timeout_per_test_s")

        def on_record(kind):
            now = time.monotonic()
            if kind == "hello" and timers["wall"] is None:
                timers["wall"] = now + spec["timeout_total_s"]
            if per_test:
                if kind == "start" and reader.s["running"]:
                    timers["test"], timers["test_id"] = now + per_test + PER_TEST_GRACE_S, reader.s["running"]
                elif kind in ("result", "done"):
                    timers["test"] = None
        reader.on_record = on_record

        def read_results():
            while True:
                chunk = os.read(r, 65536)
                if not chunk:
                    break
                reader.feed(chunk)
            reader.end()
        rr = threading.Thread(target=read_results, daemon=True)
        rr.start()
        started = time.monotonic()
        while oracle.poll() is None:
            now = time.monotonic()
            if timers["wall"] is None and now - started > READY_TIMEOUT_S + spec["timeout_total_s"]:
                facts["wall_timeout_s"] = spec["timeout_total_s"]
            elif timers["wall"] is not None and now > timers["wall"]:
                facts["wall_timeout_s"] = spec["timeout_total_s"]
            elif timers["test"] is not None and now > timers["test"]:
                facts["per_test_killed"] = {"id": timers["test_id"], "limit_s": per_test}
            if "wall_timeout_s" in facts or "per_test_killed" in facts:
                kill_group(oracle)
                break
            time.sleep(0.05)
        oracle.wait()
        kill_group(oracle)
        rr.join(KILL_GRACE_S + 5)
        kill_group(cand)
        cand.wait()
        rc = oracle.returncode
        facts["exit"], facts["signal"] = (None, "SIG%d" % -rc) if rc < 0 else (rc, None)
        facts["stderr_tail"] = b"".join(o_err).decode("utf-8", "replace")[-4000:]
        after = hash_tree(mount_dir)
        facts["grader_modified"] = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        with reader.lock:
            out = decide(reader.s, facts)
        out = enforce_verified(out, spec.get("verified"))
        text = "\n".join(log) + b"".join(o_out + o_err).decode("utf-8", "replace")
        cand_log = b"".join(cand_out + cand_err).decode("utf-8", "replace")
        if cand_log:
            text += "\n----- the candidate (the code under test) -----\n" + cand_log
        out["log"] = text[-48000:]
        out["taken"] = taken
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def candidate_user():
    """lmr's unprivileged image user when we are root (the candidate must not read the kit), else none."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(CANDIDATE_USER)
    except KeyError:
        return None


def main(argv=None):
    p = argparse.ArgumentParser(prog="grade.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--kit", default=os.path.dirname(os.path.abspath(__file__)))
    p.add_argument("--workspace", required=True)
    p.add_argument("--out", help="write the result (verdict, reason, counts, tests) as JSON here")
    p.add_argument("--reward-dir", help="Harbor: write reward.txt (1 or 0) and reward.json (the reward and the test counts) here")
    p.add_argument("--interpreter", help="the interpreter the tests run with (default: grade.json's, the task image's)")
    args = p.parse_args(argv)
    kit = os.path.abspath(args.kit)
    try:
        out = grade(kit, os.path.abspath(args.workspace), args.interpreter, candidate_user())
    except Exception as e:  # ours, not the code's: an infra verdict, never a pass
        out = {"verdict": "infra", "reason": "%s: %s" % (type(e).__name__, e), "tests": [], "counts": counts_of([]), "log": ""}
    with open(os.path.join(kit, "grade.json"), encoding="utf-8") as f:
        task_id = json.load(f)["task_id"]
    out = dict({"task_id": task_id}, **out)
    summary = {k: v for k, v in out.items() if k != "log"}
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    if args.reward_dir:
        os.makedirs(args.reward_dir, exist_ok=True)
        reward = 1 if out["verdict"] == "passed" else 0
        c = out["counts"]
        with open(os.path.join(args.reward_dir, "reward.txt"), "w") as f:
            f.write("%d\n" % reward)
        with open(os.path.join(args.reward_dir, "reward.json"), "w") as f:
            json.dump({"reward": reward, "tests": len(out["tests"]), "passed": c["passed"], "failed": c["failed"], "errors": c["errors"], "skipped": c["skipped"]}, f)
        with open(os.path.join(args.reward_dir, "lmr-result.json"), "w") as f:
            json.dump(out, f, indent=2)
    sys.stdout.write(out.get("log", "") + "\n")
    sys.stdout.write("LMR_RESULT " + json.dumps(summary) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
