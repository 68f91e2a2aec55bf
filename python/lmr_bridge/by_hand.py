"""Run a task's grader tests by hand, with the code under test in a candidate process of its
own, as lmr's harness does (without its sandboxes, results channel or limits): what
`lmr verify --keep` prints for a contributor to rerun the tests.

    python3 .../lmr_bridge/by_hand.py --tree TREE [--support DIR] [--setup FILE] -- PYTEST_ARGS

TREE is the workspace with the reference (or your code) in place; pytest runs from the
current folder, which holds the grader (lmr_tests/), with PYTEST_ARGS.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

_TOOLKIT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def main(argv=None):
    p = argparse.ArgumentParser(prog="by_hand.py")
    p.add_argument("--tree", required=True)
    p.add_argument("--support")
    p.add_argument("--setup")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    rest = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    tmp = tempfile.mkdtemp(prefix="lmr-by-hand-")
    sock = os.path.join(tmp, "candidate.sock")
    cmd = [sys.executable, "-s", "-B", os.path.join(_TOOLKIT, "lmr_bridge", "candidate.py"), "--socket", sock, "--tree", os.path.realpath(args.tree)]
    if args.support:
        cmd += ["--support", os.path.realpath(args.support)]
    if args.setup:
        cmd += ["--setup", os.path.realpath(args.setup)]
    cand = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        sys.path.insert(0, os.getcwd())
        sys.path.append(_TOOLKIT)
        from lmr_bridge import oracle

        oracle.configure(sock)
        import pytest

        code = pytest.main(["-p", "no:cacheprovider", *rest])
    finally:
        try:
            os.killpg(cand.pid, 9)
        except ProcessLookupError:
            pass
        cand.wait()
        time.sleep(0)
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
