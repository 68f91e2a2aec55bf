import { existsSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { toolkitPath } from "../core/paths.js";
import { SCHEMA_VERSION, type Category, type Paper, type Target, type TaskManifest, type Upstream } from "../manifest/types.js";

/** Everything `lmr new` decided, flag or prompt alike. */
export interface NewTaskPlan {
  id: string;
  paper: Paper;
  category: Category;
  upstream: Upstream;
  target: Target;
  contextFiles: string[];
  author: string;
  python: string;
  /** YYYY-MM-DD. */
  created: string;
}

export const INSTRUCTION_FILE = "instruction.md";
export const FIXTURES_DIR = "fixtures";
export const PAPER_FILE = "paper.json";
export const DRIVER_FILE = "driver.py";
/** The candidate set-up `lmr new` writes: where stand-ins and patched attributes go. */
export const CANDIDATE_SETUP_FILE = "tests/candidate_setup.py";

/** tests/test_<symbol>.py, e.g. tests/test_trainer_train_step.py for Trainer.train_step. */
export function placeholderTestPath(symbol: string): string {
  const stem = symbol
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  return `tests/test_${stem || "target"}.py`;
}

/**
 * The schema an editor should use: the project's own copy when the task lives in a
 * checkout of lmr (tasks/ beside schema/), so the path stays right for everyone who
 * clones it; else the installed toolkit's.
 */
function schemaFor(taskDir: string): string {
  for (let dir = dirname(taskDir); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, "schema", "task.schema.json");
    if (existsSync(candidate)) return candidate;
  }
  return toolkitPath("schema", "task.schema.json");
}

/** The manifest of a new task in `taskDir` (used for the relative `$schema` path). */
export function buildManifest(plan: NewTaskPlan, taskDir: string): TaskManifest {
  const schema = relative(taskDir, schemaFor(taskDir)).split("\\").join("/");
  return {
    $schema: schema,
    schema_version: SCHEMA_VERSION,
    id: plan.id,
    paper: plan.paper,
    category: plan.category,
    upstream: plan.upstream,
    targets: [plan.target],
    instruction: INSTRUCTION_FILE,
    tests: {
      files: [CANDIDATE_SETUP_FILE, placeholderTestPath(plan.target.symbol)],
      candidate: { setup: CANDIDATE_SETUP_FILE },
      fixtures: [FIXTURES_DIR],
      timeout_per_test_s: 30,
      timeout_total_s: 120,
    },
    environment: { python: plan.python, requirements: [], gpu: false, network: false },
    ...(plan.contextFiles.length > 0 ? { context_files: plan.contextFiles } : {}),
    record: { driver: DRIVER_FILE },
    provenance: { author: plan.author, created: plan.created },
  };
}

/**
 * A test file that fails, with a message saying why, until real tests replace
 * it: an unfinished task can never pass `lmr verify`.
 */
/** Text every placeholder test carries: \`lmr scaffold tests\` may write over such a file. */
export const PLACEHOLDER_MARK = "`lmr new` wrote this placeholder";

export function placeholderTest(target: Target, testPath: string): string {
  const message = `${testPath} is the placeholder written by \`lmr new\`: replace it with grader tests for ${target.symbol} (write driver.py, run \`lmr record\`, then \`lmr scaffold tests TASK_DIR\`; see CONTRIBUTING.md)`;
  return `"""Grader tests for \`${target.symbol}\` in ${target.file}: not written yet.

\`lmr new\` wrote this placeholder. It fails on purpose, so that the task cannot be
verified before its real tests exist. Record reference calls with \`lmr record\` (after
writing driver.py), write replay tests over this file with
\`lmr scaffold tests TASK_DIR\` (it replaces this placeholder), then add checks of your own
(see "Writing good tests" in CONTRIBUTING.md).
"""
import pytest


def test_grader_tests_are_written():
    pytest.fail(${JSON.stringify(message)})
`;
}

/**
 * A driver for `lmr record` that imports the target and stops with a message
 * saying what to write: recording the skeleton as it is fails clearly.
 */
export function driverSkeleton(target: Target): string {
  const module = target.file
    .replace(/\.py$/, "")
    .split("/")
    .join(".")
    .replace(/\.__init__$/, "");
  const top = target.symbol.split(".")[0]!;
  const call = target.symbol.includes(".")
    ? `build a ${top} the way the upstream does, then call .${target.symbol.split(".").slice(1).join(".")}(...)`
    : target.mode === "class"
      ? `build ${top} objects and call their methods`
      : `call ${top}(...)`;
  return `"""Driver for \`lmr record\`: calls \`${target.symbol}\` on inputs chosen by the task author.

\`lmr record\` runs this file against the reference implementation, from the root of the
upstream tree (so the upstream's modules import as they do there), with random,
numpy.random and torch seeded, and stores every call of the target (arguments, result or
exception) in fixtures/calls.json. \`lmr scaffold tests\` turns those calls into tests.

Make the calls cover what the paper describes: typical inputs, each option and branch,
edge cases (empty, zero, large values), and inputs that must raise (inside try/except).
"""
from ${module} import ${top}

# TODO(author): ${call}; then delete the next line.
raise SystemExit("${DRIVER_FILE} is the skeleton written by \`lmr new\`: make it call ${target.symbol}, then run \`lmr record\` again")
`;
}

/**
 * Other source files of the upstream that the target file imports
 * (`import utils`, `from models import X`, `from .core import y`): the first
 * guess at the files that help the agent.
 */
export function guessContextFiles(targetFile: string, source: string, sourceFiles: readonly string[]): string[] {
  const dir = posix.dirname(targetFile);
  const known = new Set(sourceFiles);
  const found: string[] = [];
  const add = (candidates: string[]): void => {
    const hit = candidates.map((c) => posix.normalize(c)).find((c) => known.has(c) && c !== targetFile);
    if (hit && !found.includes(hit)) found.push(hit);
  };
  const stemOf = (dots: string, dotted: string): string => {
    const path = dotted
      .split(".")
      .filter((s) => s !== "")
      .join("/");
    if (dots.length === 0) return path;
    let base = dir;
    for (let i = 1; i < dots.length; i++) base = posix.dirname(base);
    return path === "" ? base : posix.join(base, path);
  };
  const moduleFiles = (stem: string, relative: boolean): string[] =>
    stem === "" || stem === "." ? [] : [`${stem}.py`, `${stem}/__init__.py`, ...(relative ? [] : [posix.join(dir, `${stem}.py`)])];
  const names = (list: string): string[] =>
    list
      .split(",")
      .map((n) =>
        n
          .trim()
          .split(/\s+as\s+/)[0]!
          .trim(),
      )
      .filter((n) => /^[\w.]+$/.test(n));
  for (const m of source.matchAll(/^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([\w., \t]+)|import[ \t]+([\w., \t]+))/gm)) {
    if (m[4] !== undefined) {
      for (const mod of names(m[4])) add(moduleFiles(stemOf("", mod), false));
      continue;
    }
    const dots = m[1] ?? "";
    const stem = stemOf(dots, m[2] ?? "");
    const before = found.length;
    add(moduleFiles(stem, dots.length > 0));
    // `from pkg import mod` / `from . import mod`: the names may be modules themselves
    if (found.length === before)
      for (const name of names(m[3] ?? "")) add(moduleFiles(stem === "" || stem === "." ? name : `${stem}/${name}`, dots.length > 0));
  }
  return found;
}

/**
 * The candidate set-up `lmr new` writes: it runs in the candidate process (the only one that
 * imports the upstream) before the code under test is imported. As written it changes
 * nothing; it shows the two patterns a task may need, each declared in task.json.
 */
export function candidateSetupTemplate(): string {
  return `"""Candidate set-up: runs before the code under test is imported (tests.candidate.setup).

As \`lmr new\` wrote it, it changes nothing. Use it only when the upstream imports something
that cannot be installed for real on the task's base, or an installed module lacks what the
upstream calls; install for real whenever you can (environment.system_packages for Debian's
python3-* packages, environment.requirements for pinned pip packages).

1. A stand-in module (declare it in environment.stand_ins with the reason). The reason says
   whether the base's Debian has the module, as \`apt-cache policy python3-NAME\` shows it
   ("Debian bookworm has python3-NAME 1.2, but ..." or "not a Debian package; pip install NAME
   ... measured ..."); \`lmr validate\` checks that against apt where it can.

    import importlib.machinery, sys, types

    def _unavailable(what):
        def call(*args, **kwargs):
            raise RuntimeError(f"{what} is a stand-in in the grader: the tests never use it")
        return call

    if "wandb" not in sys.modules:
        wandb = types.ModuleType("wandb")
        wandb.__spec__ = importlib.machinery.ModuleSpec("wandb", None)  # find_spec needs one
        wandb.init = _unavailable("wandb.init")
        sys.modules["wandb"] = wandb

2. A patched attribute of an installed module (declare it in environment.patches, e.g.
   {"attribute": "torch.compile", "reason": "Debian's torch 1.13 has no torch.compile; the
   upstream decorates the step with it; the identity keeps the eager code"}):

    import torch

    if not hasattr(torch, "compile"):
        torch.compile = lambda fn=None, **kwargs: fn if fn is not None else (lambda f: f)

Delete this file, and tests.candidate with its entry in tests.files, if the task needs neither.
"""
`;
}
