import { readFile } from "node:fs/promises";
import { basename, join, posix } from "node:path";
import { LmrError } from "../core/errors.js";
import { writeFileAtomic } from "../core/fs-atomic.js";
import { checkRelativePath, toolkitPath } from "../core/paths.js";
import type { ResolvedTask, Target } from "../manifest/types.js";
import { PLACEHOLDER_MARK } from "./task-skeleton.js";
import { ARRAYS_FILE, CALLS_FILE, readCallsFile, type RecordedTarget } from "../record/calls.js";
import { editManifestLists, type ListEdit } from "./tests-manifest.js";
import { renderReplayTests, snakeName } from "./tests-render.js";
import { pathExists } from "../core/paths.js";

const TEMPLATE = toolkitPath("templates", "tests", "replay_test.py.tmpl");
const TARGET_TEMPLATE = toolkitPath("templates", "tests", "replay_target.py.tmpl");
const SKIPPED_TEMPLATE = toolkitPath("templates", "tests", "replay_skipped.py.tmpl");

export interface ScaffoldTestsOptions {
  /** Test file, relative to the task folder; default tests/test_<target>_replay.py. */
  out?: string;
  force?: boolean;
  /** Only these recorded symbols (`name`, `Class.method`, or `Class` for all its methods). */
  targets?: string[];
}

export interface ScaffoldTestsResult {
  task_id: string;
  /** Relative to the task folder. */
  test_file: string;
  targets: { file: string; symbol: string; calls: number }[];
  /** Recorded targets left out because the driver never called them. */
  uncalled: string[];
  manifest_updated: boolean;
}

/**
 * Writes a pytest file that replays every recorded call of fixtures/calls.json
 * against the workspace implementation and lists it (and the fixtures) in
 * task.json. The test loads the codec from beside itself: `lmr build` puts the
 * toolkit's copy there in the bundle, so the task folder holds none.
 */
export async function scaffoldTests(task: ResolvedTask, opts: ScaffoldTestsOptions = {}): Promise<ScaffoldTestsResult> {
  const calls = await readCallsFile(task);
  if (calls.arrays && !(await pathExists(join(task.dir, posix.dirname(CALLS_FILE), calls.arrays)))) {
    throw new LmrError({
      code: "calls/arrays-missing",
      file: join(task.dir, CALLS_FILE),
      pointer: "/arrays",
      message: `the recording refers to ${calls.arrays}, which is missing`,
      hint: "re-record with `lmr record` so that calls.json and calls.npz match",
    });
  }
  checkRecordingMatchesTask(task, calls.targets);
  const chosen = selectTargets(task, calls.targets, opts.targets);
  const called = chosen.filter((t) => t.calls_recorded > 0);
  const uncalled = chosen.filter((t) => t.calls_recorded === 0).map((t) => t.symbol);
  if (called.length === 0) {
    throw new LmrError({
      code: "calls/none",
      file: join(task.dir, CALLS_FILE),
      message: `the driver never called ${uncalled.join(", ")}: nothing to replay`,
      hint: "make the driver call the targets, then run `lmr record` again",
    });
  }

  // the placeholder `lmr new` wrote, else the one test file task.json names that is not there yet
  const placeholder = (await findPlaceholderTest(task)) ?? (await soleMissingTest(task));
  const out = opts.out ?? placeholder ?? `tests/test_${defaultStem(task, called)}_replay.py`;
  checkOutPath(task, out);
  const outAbs = join(task.dir, out);
  if (!opts.force && out !== placeholder && (await pathExists(outAbs))) {
    throw new LmrError({
      code: "tests/exists",
      file: outAbs,
      message: "the test file already exists",
      hint: "pass --force to overwrite it (edits to it are lost), or --out to write another file",
    });
  }
  const outDir = posix.dirname(out);
  const templates = {
    test: await readFile(TEMPLATE, "utf8"),
    target: await readFile(TARGET_TEMPLATE, "utf8"),
    skipped: await readFile(SKIPPED_TEMPLATE, "utf8"),
  };
  const source = renderReplayTests(templates, {
    fixture: CALLS_FILE,
    fixtureFromTest: posix.relative(outDir, CALLS_FILE),
    targets: called.map((t) => ({ ...t, check_mutations: findManifestTarget(task, t)?.record?.check_mutations ?? true })),
  });
  await writeFileAtomic(outAbs, source);
  const manifestUpdated = await updateManifest(task, [out], calls.arrays !== null);
  return {
    task_id: task.manifest.id,
    test_file: out,
    targets: called.map((t) => ({ file: t.file, symbol: t.symbol, calls: t.calls_recorded })),
    uncalled,
    manifest_updated: manifestUpdated,
  };
}

function selectTargets(task: ResolvedTask, recorded: RecordedTarget[], wanted: string[] | undefined): RecordedTarget[] {
  if (!wanted || wanted.length === 0) return recorded;
  const matches = (t: RecordedTarget, w: string) => t.symbol === w || t.symbol.startsWith(`${w}.`) || `${t.file}::${t.symbol}` === w;
  for (const w of wanted) {
    if (!recorded.some((t) => matches(t, w))) {
      throw new LmrError({
        code: "calls/target-unknown",
        file: join(task.dir, CALLS_FILE),
        message: `no recorded target '${w}'`,
        hint: `recorded: ${recorded.map((t) => t.symbol).join(", ") || "none"}`,
      });
    }
  }
  return recorded.filter((t) => wanted.some((w) => matches(t, w)));
}

/** The manifest target a recorded one came from (a method of a `Class` target: the class). */
function findManifestTarget(task: ResolvedTask, r: RecordedTarget): Target | undefined {
  const inFile = task.manifest.targets.filter((t) => t.file === r.file);
  return inFile.find((t) => t.symbol === r.symbol) ?? inFile.find((t) => r.symbol.startsWith(`${t.symbol}.`));
}

/** A recording made before the manifest's targets changed would replay the wrong thing. */
function checkRecordingMatchesTask(task: ResolvedTask, recorded: RecordedTarget[]): void {
  for (const r of recorded) {
    if (!findManifestTarget(task, r)) {
      throw new LmrError({
        code: "calls/stale",
        file: join(task.dir, CALLS_FILE),
        message: `the recording has calls of ${r.symbol} in ${r.file}, which is not a target in task.json`,
        hint: "the targets changed since the recording: run `lmr record` again",
      });
    }
  }
}

/** One target: its name; methods of one class: the class; otherwise the task id. */
function defaultStem(task: ResolvedTask, targets: RecordedTarget[]): string {
  if (targets.length === 1) return snakeName(targets[0]!.symbol);
  const owners = new Set(targets.map((t) => t.owner ?? ""));
  const owner = [...owners][0];
  if (owners.size === 1 && owner) return snakeName(owner);
  return snakeName(task.manifest.id);
}

function checkOutPath(task: ResolvedTask, out: string): void {
  const why = checkRelativePath(out);
  const name = basename(out);
  const bad =
    why ?? (!name.endsWith(".py") ? "is not a .py file" : !name.startsWith("test_") ? "does not start with test_, so pytest would not collect it" : undefined);
  if (bad) {
    throw new LmrError({
      code: "tests/bad-out",
      file: join(task.dir, out),
      message: `--out ${out} ${bad}`,
      hint: "use a path inside the task folder like tests/test_loss_replay.py",
    });
  }
}

async function updateManifest(task: ResolvedTask, testFiles: string[], hasArrays: boolean): Promise<boolean> {
  const text = await readFile(task.manifestPath, "utf8");
  const fixtures = task.manifest.tests.fixtures ?? [];
  const covered = (f: string) => fixtures.some((e) => e === f || f.startsWith(`${e}/`));
  const edits: ListEdit[] = [
    { path: ["tests", "files"], add: testFiles },
    {
      path: ["tests", "fixtures"],
      add: [CALLS_FILE, ...(hasArrays ? [ARRAYS_FILE] : [])].filter((f) => !covered(f)),
      remove: hasArrays ? [] : [ARRAYS_FILE],
    },
  ];
  const next = editManifestLists(text, edits);
  if (next === text) return false;
  await writeFileAtomic(task.manifestPath, next);
  return true;
}

/** The failing placeholder `lmr new` listed in tests.files, if it is still there: replay tests replace it. */
async function findPlaceholderTest(task: ResolvedTask): Promise<string | undefined> {
  for (const file of task.manifest.tests.files) {
    const text = await readFile(join(task.dir, file), "utf8").catch(() => "");
    if (text.includes(PLACEHOLDER_MARK)) return file;
  }
  return undefined;
}

async function soleMissingTest(task: ResolvedTask): Promise<string | undefined> {
  const missing: string[] = [];
  for (const file of task.manifest.tests.files) if (!(await pathExists(join(task.dir, file)))) missing.push(file);
  return missing.length === 1 ? missing[0] : undefined;
}
