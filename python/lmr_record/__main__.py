"""`python -m lmr_record CONFIG.json`: record the calls a driver makes to the targets,
or run a fixture generator.

lmr writes CONFIG (the tree, the targets, the driver, the seed, the output folder)
and reads back OUT/calls.json (+ OUT/calls.npz), or OUT/error.json when the recording
failed for a reason the task author can fix. Anything else on a non-zero exit is a
crash of ours, reported with stderr. With "mode": "generator" it runs CONFIG's
"script" the same way (seeded, after the grader's conftest.py files, from the tree
root), with no target wrapped; the script writes its files into $LMR_FIXTURES_OUT,
which lmr set, and lmr checks them.
"""
import gc
import importlib.abc
import importlib.util
import json
import os
import platform
import random
import runpy
import sys
import traceback

from . import codec, encode
from .recorder import Recorder, RecordError


def seed_everything(seed):
    """Seeds random now, and numpy.random and torch as soon as they are imported.

    Seeding right after import is the same as seeding first (nothing draws in
    between) and spares a driver that never uses torch the seconds its import takes.
    Returns the list, filled in as libraries get seeded, for calls.json.
    """
    random.seed(seed)
    seeded = ["random"]

    def seeder(name, seed_module):
        def run(module):
            seed_module(module, seed)
            seeded.append(name)

        return run

    hooks = {
        "numpy": seeder("numpy", lambda np, s: np.random.seed(s)),
        "torch": seeder("torch", lambda torch, s: torch.manual_seed(s)),
    }
    for name in list(hooks):
        if name in sys.modules:
            hooks.pop(name)(sys.modules[name])
    if hooks:
        sys.meta_path.insert(0, SeedOnImport(hooks))
    return seeded


class SeedOnImport(importlib.abc.MetaPathFinder):
    """Runs a hook right after the first import of a named top-level module."""

    def __init__(self, hooks):
        self.hooks = hooks

    def find_spec(self, name, path, target=None):
        if name not in self.hooks:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        hook = self.hooks.pop(name)
        exec_module = loader.exec_module

        def exec_then_seed(module):
            exec_module(module)
            hook(module)

        loader.exec_module = exec_then_seed
        return spec


def inside(root):
    root = os.path.realpath(root) + os.sep

    def allow(cls):
        mod = sys.modules.get(getattr(cls, "__module__", ""))
        path = getattr(mod, "__file__", None)
        return bool(path) and os.path.realpath(path).startswith(root)

    return allow


def run_conftests(conftests):
    """Executes the candidate's set-up and the grader's conftest.py files before any target is imported.

    The set-up (or a conftest) may put stand-ins into sys.modules for packages the upstream imports
    at top level but the targets never use; the recording needs them as the grader
    does. Each is imported the way pytest does it: a fresh module named `conftest`.
    """
    for item in conftests:
        spec = importlib.util.spec_from_file_location("conftest", item["path"])
        module = importlib.util.module_from_spec(spec)
        sys.modules["conftest"] = module
        try:
            spec.loader.exec_module(module)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # pytest.skip() at module level raises a BaseException
            frames = [f for f in traceback.extract_tb(e.__traceback__) if "lmr_record" not in f.filename and "importlib" not in f.filename]
            tail = "".join(traceback.format_list(frames[-6:])).rstrip()
            raise RecordError(
                "record/conftest-failed",
                "%s failed while lmr record loaded it before importing the targets: %s: %s%s"
                % (item["label"], type(e).__name__, e, "\n" + tail if tail else ""),
                "lmr record runs the candidate's set-up (tests.candidate.setup), then every conftest.py next to "
                "the task's test files, before it imports a target; make it importable with the recording interpreter",
                item.get("pointer", "/tests/files"),
            ) from None


def run_driver(driver):
    if "file" in driver:
        sys.argv = [driver["file"]]
        runpy.run_path(driver["file"], run_name="__main__")
    else:
        sys.argv = ["-c"]
        code = compile(driver["code"], "<lmr record --driver>", "exec")
        exec(code, {"__name__": "__main__", "__builtins__": __builtins__})


def driver_failure(exc, what="driver", code="record/driver-failed"):
    frames = traceback.extract_tb(exc.__traceback__)
    # Our own frames (runpy, this module) say nothing to the task author.
    frames = [f for f in frames if "lmr_record" not in f.filename and "runpy" not in f.filename] or frames
    tail = "".join(traceback.format_list(frames[-6:]))
    return RecordError(
        code,
        "the %s raised %s: %s\n%s" % (what, type(exc).__name__, exc, tail.rstrip()),
        "fix the %s (it runs against the reference, from the workspace root)" % what,
    )


def versions():
    out = {"python": platform.python_version()}
    for name in ("numpy", "torch", "pandas"):
        mod = sys.modules.get(name)
        if mod is not None:
            out[name] = str(getattr(mod, "__version__", "?"))
    return out


def check_finished(recorder):
    """A generator call the driver neither exhausted nor closed has no end to replay."""
    gc.collect()  # a generator the driver dropped is closed when it is collected
    if recorder.error is not None:
        return recorder.error
    for entry in recorder.entries:
        for call in entry.calls if entry.is_generator else ():
            if not any(k in call for k in ("result", "raises", "closed")):
                return RecordError(
                    "record/unreplayable",
                    "call %d of %s: the driver left the generator unfinished (neither exhausted nor closed)" % (call["index"], entry.symbol),
                    "iterate it to the end, or close() it (a for loop that breaks does)",
                    entry.spec["pointer"],
                )
    return None


def write_outputs(cfg, recorder, seeded):
    out_dir = cfg["out"]
    targets = [e.to_json() for e in recorder.entries]
    doc = {
        "format": codec.FORMAT,
        "task": cfg["task"],
        "driver": cfg["driver_label"],
        "seed": cfg["seed"],
        "seeded": seeded,
        "environment": versions(),
        "arrays": None,
        "targets": targets,
    }
    used = encode.array_keys(targets)
    arrays = {k: v for k, v in recorder.encoder.arrays.items() if k in used}
    if arrays:
        doc["arrays"] = "calls.npz"
        with open(os.path.join(out_dir, "calls.npz"), "wb") as f:
            f.write(encode.npz_bytes(arrays))
    with open(os.path.join(out_dir, "calls.json"), "w", encoding="utf-8") as f:
        f.write(encode.dumps(doc))


def fail(out_dir, err):
    with open(os.path.join(out_dir, "error.json"), "w", encoding="utf-8") as f:
        json.dump({"code": err.code, "message": err.message, "hint": err.hint, "pointer": err.pointer}, f)
    sys.exit(2)


def main(argv):
    with open(argv[0], encoding="utf-8") as f:
        cfg = json.load(f)
    tree = cfg["tree"]
    os.chdir(tree)
    if sys.path[0] != tree:
        sys.path.insert(0, tree)
    seeded = seed_everything(cfg["seed"])
    if cfg.get("mode") == "generator":
        return run_generator(cfg)
    recorder = Recorder(inside(tree))
    try:
        run_conftests(cfg.get("conftests") or [])
        for spec in cfg["targets"]:
            recorder.install(spec)
    except RecordError as e:
        fail(cfg["out"], e)
    try:
        run_driver(cfg["driver"])
    except SystemExit as e:
        if e.code not in (None, 0) and recorder.error is None:
            fail(cfg["out"], driver_failure(e))
    except RecordError as e:
        fail(cfg["out"], e)
    except Exception as e:
        fail(cfg["out"], recorder.error or driver_failure(e))
    if recorder.error is not None:
        # The driver caught our error and went on; the recording is still incomplete.
        fail(cfg["out"], recorder.error)
    unfinished = check_finished(recorder)
    if unfinished is not None:
        fail(cfg["out"], unfinished)
    write_outputs(cfg, recorder, seeded)


def run_generator(cfg):
    """A fixture generator: a script run like the driver, with nothing wrapped."""
    label = cfg["script_label"]
    try:
        run_conftests(cfg.get("conftests") or [])
    except RecordError as e:
        fail(cfg["out"], e)
    try:
        sys.argv = [cfg["script"]]
        runpy.run_path(cfg["script"], run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            fail(cfg["out"], driver_failure(e, "generator %s" % label, "record/generator-failed"))
    except Exception as e:
        fail(cfg["out"], driver_failure(e, "generator %s" % label, "record/generator-failed"))


if __name__ == "__main__":
    main(sys.argv[1:])
