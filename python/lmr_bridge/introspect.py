"""What a run loaded, imported and executed: shared by the oracle's harness
(python/lmr_harness/run_pytest.py) and the candidate (server.py), each for the code that runs
in it. Standard library only.
"""
import os
import sys
import types

# the toolkit's own python folder (lmr_harness, lmr_bridge, lmr_record): never part of a plan
TOOLKIT_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep
_MAX_MESSAGE = 4000


def short(text):
    text = str(text or "")
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 20] + "\n...[truncated]"


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
                    if real.startswith(TOOLKIT_DIR):
                        continue  # lmr_bridge and its codec: the harness's, not the task's
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


def loaded_modules(root, own, server_tempdir=None):
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
    skip = [os.path.realpath(d) + os.sep for d in own] + [TOOLKIT_DIR]
    # where a library wrote code to import (torch's remote-module template) at the server's import
    if server_tempdir:
        skip.append(os.path.realpath(server_tempdir) + os.sep)
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


