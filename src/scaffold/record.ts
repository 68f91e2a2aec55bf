import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix, relative, resolve } from "node:path";
import { buildBundle } from "../bundle/build.js";
import { BUNDLE_FILES } from "../bundle/types.js";
import { LmrError } from "../core/errors.js";
import { writeFileAtomic } from "../core/fs-atomic.js";
import { isInside, toPosix } from "../core/paths.js";
import { displayPath } from "../manifest/read.js";
import type { ResolvedTask } from "../manifest/types.js";
import { resolvePython } from "../runner/python-env.js";
import type { PythonEnv } from "../runner/types.js";
import type { SourceOptions } from "../source/types.js";
import { ARRAYS_FILE, CALLS_FILE, type CallsFile, type RecordedKind } from "./record-calls.js";
import { runRecordHarness } from "./record-python.js";

export const DEFAULT_MAX_CALLS = 50;
export const DEFAULT_RECORD_TIMEOUT_S = 600;

/** The driver: Python source given inline, or a file (absolute, or relative to cwd or the task folder). */
export type DriverSpec = { code: string } | { file: string };

export interface RecordOptions extends SourceOptions {
  /** Default: the manifest's record.driver. */
  driver?: DriverSpec;
  /** Overrides every record.max_calls of the manifest. */
  maxCalls?: number;
  /** Interpreter; default LMR_PYTHON, else a cached env for the task's requirements, else python3. */
  python?: string;
  seed?: number;
  timeoutS?: number;
}

export interface RecordedTargetSummary {
  file: string;
  symbol: string;
  kind: RecordedKind;
  calls_seen: number;
  calls_recorded: number;
}

export interface RecordResult {
  task_id: string;
  /** Files written, relative to the task folder. */
  files: string[];
  /** Their sizes in bytes, in the same order. */
  bytes: number[];
  /** A calls.npz of an earlier recording that the manifest still lists but the new one does not use. */
  stale?: string;
  targets: RecordedTargetSummary[];
  python: { path: string; version: string };
  duration_s: number;
}

/**
 * Builds the task's bundle in a temp folder, lays the reference over the
 * workspace, runs the driver there with every target wrapped by
 * python/lmr_record, and writes fixtures/calls.json (+ calls.npz) into the task
 * folder atomically. The same driver gives byte-identical files.
 */
export async function recordCalls(task: ResolvedTask, opts: RecordOptions = {}): Promise<RecordResult> {
  const t0 = performance.now();
  const m = task.manifest;
  const driver = await resolveDriver(task, opts.driver);
  const python = await resolvePython({ ...(opts.python ? { python: opts.python } : {}), requirements: m.environment.requirements });
  const scratch = await mkdtemp(join(tmpdir(), "lmr-record-"));
  try {
    const bundle = await buildBundle(task, join(scratch, "bundle"), opts.mirror !== undefined ? { mirror: opts.mirror } : {});
    const tree = join(bundle.dir, BUNDLE_FILES.workspace);
    await cp(join(bundle.dir, BUNDLE_FILES.reference), tree, { recursive: true, force: true });
    const out = join(scratch, "out");
    await mkdir(out);
    const config = {
      tree,
      out,
      task: m.id,
      seed: opts.seed ?? 0,
      driver: "code" in driver ? { code: driver.code } : { file: driver.abs },
      conftests: await findConftests(task),
      driver_label: "code" in driver ? { code: driver.code } : { file: driver.rel },
      targets: m.targets.map((t, i) => ({
        file: t.file,
        symbol: t.symbol,
        pointer: `/targets/${i}`,
        max_calls: opts.maxCalls ?? t.record?.max_calls ?? m.record?.max_calls ?? DEFAULT_MAX_CALLS,
        self_attrs: t.record?.self_attrs ?? null,
        skip_args: t.record?.skip_args ?? [],
      })),
    };
    const configPath = join(scratch, "config.json");
    await writeFile(configPath, JSON.stringify(config));
    const run = await runRecordHarness(python.path, tree, configPath, scratch, opts.timeoutS ?? DEFAULT_RECORD_TIMEOUT_S);
    await failIfUnsuccessful(task, driver, out, run, opts.timeoutS ?? DEFAULT_RECORD_TIMEOUT_S, python);
    return { ...(await saveOutputs(task, out)), python: { path: python.path, version: python.version }, duration_s: round((performance.now() - t0) / 1000) };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The conftest.py files in the folders of tests.files, in sorted path order: the
 * harness runs them before it imports any target, so that stand-ins a conftest
 * puts into sys.modules for the grader are there while recording too.
 */
export async function findConftests(task: ResolvedTask): Promise<{ path: string; label: string }[]> {
  const folders = new Set(task.manifest.tests.files.map((f) => posix.dirname(toPosix(f))));
  const found: string[] = [];
  for (const folder of folders) {
    const rel = posix.join(folder, "conftest.py");
    if ((await stat(join(task.dir, rel)).catch(() => undefined))?.isFile()) found.push(rel);
  }
  return found.sort().map((rel) => ({ path: join(task.dir, rel), label: rel }));
}

type ResolvedDriver = { code: string } | { abs: string; rel: string };

async function resolveDriver(task: ResolvedTask, given: DriverSpec | undefined): Promise<ResolvedDriver> {
  if (given && "code" in given) {
    if (given.code.trim() === "") throw new LmrError({ code: "record-driver-empty", kind: "usage", message: "--driver is empty", hint: 'pass Python code, e.g. --driver "from m import f; f(1)"' });
    return { code: given.code };
  }
  const fromManifest = task.manifest.record?.driver;
  if (!given && fromManifest === undefined) {
    throw new LmrError({
      code: "record-no-driver",
      kind: "usage",
      file: displayPath(task.manifestPath),
      message: "no driver: pass --driver CODE or --driver-file PY, or set record.driver in the manifest",
      hint: "a driver is Python that calls the targets the way the paper's code does, e.g. tasks/<id>/driver.py",
    });
  }
  // A file named on the command line is relative to cwd, as usual; failing that, to the task folder.
  const candidates = given ? [resolve(given.file), resolve(task.dir, given.file)] : [resolve(task.dir, fromManifest!)];
  for (const abs of candidates) {
    const info = await stat(abs).catch(() => undefined);
    if (!info?.isFile()) continue;
    if (!isInside(task.dir, abs)) {
      throw new LmrError({
        code: "record-driver-outside",
        kind: "usage",
        file: abs,
        message: "the driver file is outside the task folder",
        hint: `move it into ${task.dir} so that the recording can be repeated from the task alone`,
      });
    }
    return { abs, rel: toPosix(relative(task.dir, abs)) };
  }
  throw new LmrError({
    code: "record-driver-missing",
    kind: "usage",
    file: given ? given.file : displayPath(task.manifestPath),
    ...(given ? {} : { pointer: "/record/driver" }),
    message: "driver file does not exist",
    hint: "create it in the task folder (e.g. driver.py) or fix the path",
  });
}

async function failIfUnsuccessful(task: ResolvedTask, driver: ResolvedDriver, out: string, run: Awaited<ReturnType<typeof runRecordHarness>>, timeoutS: number, python: PythonEnv): Promise<void> {
  if (run.timedOut) {
    throw new LmrError({
      code: "record-timeout",
      kind: "input",
      file: "rel" in driver ? driver.rel : displayPath(task.manifestPath),
      message: `the driver ran longer than ${timeoutS} s and was stopped`,
      hint: "make the driver smaller (fewer or shorter calls) or pass --timeout",
    });
  }
  const reported = await readFile(join(out, "error.json"), "utf8").then((t) => JSON.parse(t) as { code: string; message: string; hint: string; pointer: string }, () => undefined);
  if (reported) {
    const onDriver = reported.code === "record-driver-failed";
    throw new LmrError({
      code: reported.code,
      kind: "input",
      file: onDriver && "rel" in driver ? driver.rel : onDriver ? "--driver" : displayPath(task.manifestPath),
      ...(reported.pointer ? { pointer: reported.pointer } : {}),
      message: reported.message,
      ...(reported.hint ? { hint: reported.hint } : {}),
    });
  }
  if (run.exitCode !== 0) {
    throw new LmrError({
      code: "record-crashed",
      kind: "infra",
      message: `the recording harness failed (${run.signal ?? `exit ${run.exitCode}`}) under ${python.path}:\n${run.output.trim()}`,
      hint: "a bug in lmr or an interpreter that cannot run it; re-run with --python pointing at CPython 3.9+",
    });
  }
}

/** Writes the npz, then the JSON that refers to it; clears an npz that nothing refers to any more. */
async function saveOutputs(task: ResolvedTask, out: string): Promise<Omit<RecordResult, "python" | "duration_s">> {
  const json = await readFile(join(out, "calls.json"));
  const calls = JSON.parse(json.toString("utf8")) as CallsFile;
  const files: string[] = [CALLS_FILE];
  const bytes: number[] = [json.length];
  let stale: string | undefined;
  const npzPath = join(task.dir, ARRAYS_FILE);
  if (calls.arrays) {
    const npz = await readFile(join(out, calls.arrays));
    await writeFileAtomic(npzPath, npz);
    files.push(ARRAYS_FILE);
    bytes.push(npz.length);
  } else if (await stat(npzPath).then(() => true, () => false)) {
    if ((task.manifest.tests.fixtures ?? []).includes(ARRAYS_FILE)) stale = ARRAYS_FILE;
    else await rm(npzPath, { force: true });
  }
  await writeFileAtomic(join(task.dir, CALLS_FILE), json);
  return {
    task_id: task.manifest.id,
    files,
    bytes,
    ...(stale ? { stale } : {}),
    targets: calls.targets.map((t) => ({ file: t.file, symbol: t.symbol, kind: t.kind, calls_seen: t.calls_seen, calls_recorded: t.calls_recorded })),
  };
}

const round = (x: number): number => Math.round(x * 1000) / 1000;
