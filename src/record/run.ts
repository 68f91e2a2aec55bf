import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { buildBundle } from "../bundle/build.js";
import { BUNDLE_FILES, type BundleInfo } from "../bundle/types.js";
import { displayPath } from "../manifest/read.js";
import type { ResolvedTask } from "../manifest/types.js";
import type { PythonEnv } from "../runner/types.js";
import { findInRecording, findInTargets, type LowPrecisionFinding } from "./low-precision.js";
import { ARRAYS_FILE, CALLS_FILE, type CallsFile } from "./calls.js";
import { findConftests, runGenerator, type ProducedFile } from "./generators.js";
import { failIfUnsuccessful, runRecordHarness } from "./python.js";

export const DEFAULT_MAX_CALLS = 50;
export const DEFAULT_RECORD_TIMEOUT_S = 600;

/** A driver ready to run: inline code, or a file inside the task folder. */
export type ResolvedDriver = { code: string } | { abs: string; rel: string };

/** How to make a task's fixtures. */
export interface FixturePlan {
  /** The driver; none when the task only has generators. */
  driver?: ResolvedDriver;
  python: PythonEnv;
  seed: number;
  /** Overrides every record.max_calls of the manifest. */
  maxCalls?: number;
  timeoutS: number;
  mirror?: string;
  /** A bundle of the task already built (lmr verify's): used instead of building another. */
  bundle?: BundleInfo;
}

export interface GeneratorRun {
  script: string;
  outputs: string[];
  duration_s: number;
}

/** Every fixture file the plan made, in memory, before anything is written to the task. */
export interface ProducedFixtures {
  /** calls.json as the driver wrote it, when a driver ran. */
  calls?: CallsFile;
  /** bfloat16/float16 on the reference's path: in the recorded values or the targets' source. */
  lowPrecision: LowPrecisionFinding[];
  /** calls.json (+ calls.npz) first, then each generator's outputs in manifest order. */
  files: ProducedFile[];
  generators: GeneratorRun[];
}

/**
 * Builds the task's bundle once, then runs the driver (if any) and every
 * record.generators script, each on a fresh copy of the workspace with the reference
 * laid over it (so no run sees files another one left), in `scratch`. Throws
 * LmrError (kind "input") naming the driver or script when one fails, times out, or a
 * generator writes other files than its outputs.
 */
export async function produceFixtures(task: ResolvedTask, plan: FixturePlan, scratch: string): Promise<ProducedFixtures> {
  // only read: each run copies its workspace and reference into a fresh tree
  const bundle = plan.bundle ?? (await buildBundle(task, join(scratch, "bundle"), plan.mirror !== undefined ? { mirror: plan.mirror } : {}));
  let runs = 0;
  const freshTree = async (): Promise<{ tree: string; dir: string }> => {
    const dir = join(scratch, `run-${runs++}`);
    const tree = join(dir, "tree");
    await cp(join(bundle.dir, BUNDLE_FILES.workspace), tree, { recursive: true });
    await cp(join(bundle.dir, BUNDLE_FILES.reference), tree, { recursive: true, force: true });
    return { tree, dir };
  };
  const conftests = await findConftests(task);
  const out: ProducedFixtures = {
    files: [],
    generators: [],
    lowPrecision: await findInTargets(task.manifest.targets, join(bundle.dir, BUNDLE_FILES.reference)),
  };
  if (plan.driver) {
    const { tree, dir } = await freshTree();
    const recorded = await runDriver(task, plan, plan.driver, tree, dir, conftests);
    out.calls = recorded.calls;
    out.lowPrecision.push(...findInRecording(recorded.calls));
    out.files.push(...recorded.files);
  }
  for (const [index, gen] of (task.manifest.record?.generators ?? []).entries()) {
    const { tree, dir } = await freshTree();
    const t0 = performance.now();
    const files = await runGenerator(
      task,
      { index, script: gen.script, outputs: gen.outputs },
      { tree, dir, python: plan.python, seed: plan.seed, timeoutS: plan.timeoutS, conftests },
    );
    out.files.push(...files);
    out.generators.push({ script: gen.script, outputs: files.map((f) => f.file), duration_s: Math.round(performance.now() - t0) / 1000 });
  }
  return out;
}

async function runDriver(
  task: ResolvedTask,
  plan: FixturePlan,
  driver: ResolvedDriver,
  tree: string,
  dir: string,
  conftests: { path: string; label: string }[],
): Promise<{ calls: CallsFile; files: ProducedFile[] }> {
  const m = task.manifest;
  const out = join(dir, "out");
  await mkdir(out);
  const config = {
    tree,
    out,
    task: m.id,
    seed: plan.seed,
    driver: "code" in driver ? { code: driver.code } : { file: driver.abs },
    conftests,
    driver_label: "code" in driver ? { code: driver.code } : { file: driver.rel },
    targets: m.targets.map((t, i) => ({
      file: t.file,
      symbol: t.symbol,
      pointer: `/targets/${i}`,
      max_calls: plan.maxCalls ?? t.record?.max_calls ?? m.record?.max_calls ?? DEFAULT_MAX_CALLS,
      self_attrs: t.record?.self_attrs ?? null,
      skip_args: t.record?.skip_args ?? [],
    })),
  };
  const configPath = join(dir, "config.json");
  await writeFile(configPath, JSON.stringify(config));
  const run = await runRecordHarness(plan.python, tree, configPath, dir, plan.timeoutS, {}, task.dir);
  await failIfUnsuccessful(run, out, {
    file: "rel" in driver ? driver.rel : displayPath(task.manifestPath),
    onDriver: "rel" in driver ? driver.rel : "--driver",
    manifest: displayPath(task.manifestPath),
    what: "the driver",
    timeoutS: plan.timeoutS,
    python: plan.python,
  });
  const json = await readFile(join(out, "calls.json"));
  const calls = JSON.parse(json.toString("utf8")) as CallsFile;
  const files: ProducedFile[] = [{ file: CALLS_FILE, data: json }];
  if (calls.arrays) files.push({ file: ARRAYS_FILE, data: await readFile(join(out, calls.arrays)) });
  return { calls, files };
}
