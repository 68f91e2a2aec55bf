"""Run a task's grader tests by hand, with the code under test in a candidate process of its
own, as lmr's harness does (without its sandboxes, results channel or limits): what
`lmr verify --keep` prints for a contributor to rerun the tests.

    python3 .../lmr_bridge/by_hand.py --tree TREE [--support DIR] [--setup FILE] -- PYTEST_ARGS

TREE is the workspace with the reference (or your code) in place; pytest runs from the
current folder, which holds the grader (lmr_tests/), with PYTEST_ARGS.

`start` and `stop` are also what the conftest.py of an `lmr export --format lmr-bench` folder
calls, so that exported tests run under plain `pytest` the same way.
"""
import argparse
import os
import subprocess
import sys
import tempfile

_TOOLKIT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def start(tree, support=None, setup=None, warm=()):
    """Starts a candidate server on TREE and points this process's oracle at it; returns it for `stop`."""
    tmp = tempfile.mkdtemp(prefix="lmr-by-hand-")
    sock = os.path.join(tmp, "candidate.sock")
    cmd = [sys.executable, "-s", "-B", os.path.join(_TOOLKIT, "lmr_bridge", "candidate.py"), "--socket", sock, "--tree", os.path.realpath(tree)]
    if support:
        cmd += ["--support", os.path.realpath(support)]
    if setup:
        cmd += ["--setup", os.path.realpath(setup)]
    for module in warm:
        cmd += ["--warm", module]
    cand = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, start_new_session=True)
    if _TOOLKIT not in sys.path:
        sys.path.append(_TOOLKIT)
    from lmr_bridge import oracle

    oracle.configure(sock)
    return cand


def stop(cand):
    """Kills the candidate's whole process group."""
    if cand is None:
        return
    try:
        os.killpg(cand.pid, 9)
    except ProcessLookupError:
        pass
    cand.wait()


def main(argv=None):
    p = argparse.ArgumentParser(prog="by_hand.py")
    p.add_argument("--tree", required=True)
    p.add_argument("--support")
    p.add_argument("--setup")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    rest = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    cand = start(args.tree, args.support, args.setup)
    try:
        sys.path.insert(0, os.getcwd())
        import pytest

        code = pytest.main(["-p", "no:cacheprovider", *rest])
    finally:
        stop(cand)
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
