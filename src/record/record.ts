import { rm, stat } from "node:fs/promises";
import { makeTrustedScratch } from "../runner/trusted-scratch.js";
import { join, relative, resolve } from "node:path";
import { LmrError } from "../core/errors.js";
import { writeFileAtomic } from "../core/fs-atomic.js";
import { isInside, toPosix } from "../core/paths.js";
import { displayPath } from "../manifest/read.js";
import type { ResolvedTask } from "../manifest/types.js";
import { nodeRuntime } from "../env/node-env.js";
import { resolveRunPython } from "../runner/run-python.js";
import type { SandboxChoice } from "../runner/types.js";
import type { SourceOptions } from "../source/types.js";
import { listStrayPlaceholders } from "../manifest/fixture-claims.js";
import type { LowPrecisionFinding } from "./low-precision.js";
import { ARRAYS_FILE, CALLS_FILE, type RecordedKind } from "./calls.js";
import { needsNoPython } from "./generators.js";
import { DEFAULT_MAX_CALLS, DEFAULT_RECORD_TIMEOUT_S, produceFixtures, type GeneratorRun, type ProducedFixtures, type ResolvedDriver } from "./run.js";

export { DEFAULT_MAX_CALLS, DEFAULT_RECORD_TIMEOUT_S };

/** The driver: Python source given inline, or a file (absolute, or relative to cwd or the task folder). */
export type DriverSpec = { code: string } | { file: string };

export interface RecordOptions extends SourceOptions {
  /** Default: the manifest's record.driver. */
  driver?: DriverSpec;
  /** Overrides every record.max_calls of the manifest. */
  maxCalls?: number;
  /** Interpreter; default LMR_PYTHON, else a cached env for the task's requirements, else python3. */
  python?: string;
  /** Where the driver and generators run: "none" (default: this machine), "docker" (the task's image, built if missing), "auto" (docker where built). */
  sandbox?: SandboxChoice;
  seed?: number;
  timeoutS?: number;
}

interface RecordedTargetSummary {
  file: string;
  symbol: string;
  kind: RecordedKind;
  calls_seen: number;
  calls_recorded: number;
}

export interface RecordResult {
  task_id: string;
  /** Files written, relative to the task folder: calls.json (+ calls.npz), then generator outputs. */
  files: string[];
  /** Their sizes in bytes, in the same order. */
  bytes: number[];
  /** A calls.npz of an earlier recording that the manifest still lists but the new one does not use. */
  stale?: string;
  /** The driver's targets; empty when the task has only generators. */
  targets: RecordedTargetSummary[];
  generators: GeneratorRun[];
  /** bfloat16/float16 on the reference's path (recorded values, the targets' source): replays cannot judge it at float32 tolerances. */
  low_precision: LowPrecisionFinding[];
  python: { path: string; version: string };
  duration_s: number;
}

/**
 * Builds the task's bundle in a temp folder and makes every fixture the task says how
 * to make: the driver (run with every target wrapped by python/lmr_record, giving
 * fixtures/calls.json + calls.npz) and each record.generators script. Only when all of
 * them succeeded are the files written into the task folder, each atomically; a failure
 * leaves the task as it was. The same driver and scripts give byte-identical files.
 */
export async function recordCalls(task: ResolvedTask, opts: RecordOptions = {}): Promise<RecordResult> {
  const t0 = performance.now();
  const driver = await resolveDriver(task, opts.driver);
  // JavaScript generators only (and no --driver): no interpreter to resolve (nor a Python image to build under docker)
  const python =
    !driver && needsNoPython(task)
      ? nodeRuntime()
      : await resolveRunPython({
          sandbox: opts.sandbox ?? "none",
          environment: task.manifest.environment,
          ...(opts.python ? { python: opts.python } : {}),
          requirements: task.manifest.environment.requirements,
        });
  const scratchDir = await makeTrustedScratch("lmr-record-");
  const scratch = scratchDir.dir;
  try {
    const produced = await produceFixtures(
      task,
      {
        ...(driver ? { driver } : {}),
        python,
        seed: opts.seed ?? 0,
        ...(opts.maxCalls !== undefined ? { maxCalls: opts.maxCalls } : {}),
        timeoutS: opts.timeoutS ?? DEFAULT_RECORD_TIMEOUT_S,
        ...(opts.mirror !== undefined ? { mirror: opts.mirror } : {}),
      },
      scratch,
    );
    return {
      ...(await saveOutputs(task, produced)),
      python: { path: python.path, version: python.version },
      duration_s: round((performance.now() - t0) / 1000),
    };
  } finally {
    await scratchDir.release();
  }
}

/** The driver to run: the one given, else record.driver; none when the task has only generators. */
export async function resolveDriver(task: ResolvedTask, given: DriverSpec | undefined): Promise<ResolvedDriver | undefined> {
  if (given && "code" in given) {
    if (given.code.trim() === "")
      throw new LmrError({ code: "record/driver-empty", message: "--driver is empty", hint: 'pass Python code, e.g. --driver "from m import f; f(1)"' });
    return { code: given.code };
  }
  const fromManifest = task.manifest.record?.driver;
  if (!given && fromManifest === undefined) {
    if ((task.manifest.record?.generators ?? []).length > 0) return undefined;
    throw new LmrError({
      code: "record/no-driver",
      file: displayPath(task.manifestPath),
      message: "no driver: pass --driver CODE or --driver-file PY, or set record.driver in the manifest",
      hint: "a driver is Python that calls the targets the way the paper's code does, e.g. tasks/<id>/driver.py (fixtures a driver cannot record come from record.generators)",
    });
  }
  // A file named on the command line is relative to cwd, as usual; failing that, to the task folder.
  const candidates = given ? [resolve(given.file), resolve(task.dir, given.file)] : [resolve(task.dir, fromManifest!)];
  for (const abs of candidates) {
    const info = await stat(abs).catch(() => undefined);
    if (!info?.isFile()) continue;
    if (!isInside(task.dir, abs)) {
      throw new LmrError({
        code: "record/driver-outside",
        file: abs,
        message: "the driver file is outside the task folder",
        hint: `move it into ${task.dir} so that the recording can be repeated from the task alone`,
      });
    }
    return { abs, rel: toPosix(relative(task.dir, abs)) };
  }
  throw new LmrError({
    code: "record/driver-missing",
    file: given ? given.file : displayPath(task.manifestPath),
    ...(given ? {} : { pointer: "/record/driver" }),
    message: "driver file does not exist",
    hint: "create it in the task folder (e.g. driver.py) or fix the path",
  });
}

/**
 * Writes generator outputs, then the npz, then the JSON that refers to it (a reader
 * that sees the new calls.json finds its arrays); clears an npz nothing refers to any more.
 */
async function saveOutputs(task: ResolvedTask, produced: ProducedFixtures): Promise<Omit<RecordResult, "python" | "duration_s">> {
  const ordered = [...produced.files.filter((f) => f.file !== CALLS_FILE), ...produced.files.filter((f) => f.file === CALLS_FILE)];
  let stale: string | undefined;
  if (produced.calls && !produced.calls.arrays) {
    const npzPath = join(task.dir, ARRAYS_FILE);
    if (
      await stat(npzPath).then(
        () => true,
        () => false,
      )
    ) {
      if ((task.manifest.tests.fixtures ?? []).includes(ARRAYS_FILE)) stale = ARRAYS_FILE;
      else await rm(npzPath, { force: true });
    }
  }
  for (const f of ordered) await writeFileAtomic(join(task.dir, f.file), f.data);
  // the folder holds real fixtures now: the .gitkeep `lmr new` left would be a stray grader file
  for (const placeholder of await listStrayPlaceholders(task.dir)) await rm(join(task.dir, placeholder), { force: true });
  return {
    task_id: task.manifest.id,
    files: produced.files.map((f) => f.file),
    bytes: produced.files.map((f) => f.data.length),
    ...(stale ? { stale } : {}),
    targets: (produced.calls?.targets ?? []).map((t) => ({
      file: t.file,
      symbol: t.symbol,
      kind: t.kind,
      calls_seen: t.calls_seen,
      calls_recorded: t.calls_recorded,
    })),
    generators: produced.generators,
    low_precision: produced.lowPrecision,
  };
}

const round = (x: number): number => Math.round(x * 1000) / 1000;
