import { randomBytes } from "node:crypto";
import { readFile, readdir, rm, rmdir } from "node:fs/promises";
import { join } from "node:path";
import type { InstructionLevel } from "../manifest/level.js";
import { LmrError, type Problem } from "../core/errors.js";
import { writeJsonAtomic } from "../core/fs-atomic.js";
import {
  RESULTS_DIR,
  RUN_FILE,
  RUN_LAYOUT,
  listSampleFolders,
  locateSample,
  readTaskSet,
  type RunConfig,
  type RunModel,
  type RunShard,
  type TaskSetChoice,
} from "../run-folder/index.js";
import type { GradeJob } from "./grade-sample.js";
import type { ResolvedTask } from "../manifest/types.js";

/**
 * Refuses a run folder whose results/ another layout wrote: grading into it
 * would mix two layouts that no reader could tell apart. Reads only.
 */
export async function checkRunFolderLayout(outDir: string, level?: InstructionLevel): Promise<void> {
  let prev: Partial<RunConfig> | undefined;
  try {
    prev = JSON.parse(await readFile(join(outDir, RUN_FILE), "utf8")) as Partial<RunConfig>;
  } catch {
    return; // a new run folder, or one a killed run left before run.json
  }
  if (level !== undefined && prev.level !== undefined && prev.level !== level) {
    const results = await readdir(join(outDir, RESULTS_DIR)).catch(() => [] as string[]);
    if (results.some((n) => !n.startsWith("."))) {
      throw new LmrError({
        code: "eval/level-mismatch",
        file: join(outDir, RUN_FILE),
        pointer: "/level",
        message: `this run folder holds results graded at level '${prev.level}', and this run is at level '${level}'; a run folder holds one level, so that reports never pool them`,
        hint: `grade into another --out (lmr report RUN_A RUN_B shows the levels side by side), or pass --level ${prev.level}`,
      });
    }
  }
  const layout = typeof prev.layout === "number" ? prev.layout : 1;
  if (layout === RUN_LAYOUT) return;
  const results = await readdir(join(outDir, RESULTS_DIR)).catch(() => [] as string[]);
  if (layout < RUN_LAYOUT && results.every((n) => n.startsWith("."))) return;
  throw new LmrError({
    code: "eval/run-layout",
    file: join(outDir, RUN_FILE),
    pointer: "/layout",
    message:
      layout < RUN_LAYOUT
        ? `this run folder holds results in layout ${layout} (results/<task>/<sample>/), from an lmr before results had a folder per model`
        : `this run folder was written by a newer lmr (layout ${layout}; this one writes ${RUN_LAYOUT})`,
    hint:
      layout < RUN_LAYOUT
        ? "grade into a new --out (lmr report still reads this folder), or delete its results/ to grade it again here"
        : "use the lmr that wrote it, or a new --out",
  });
}

export interface RunConfigInput {
  submissions: string;
  tasks: readonly ResolvedTask[];
  set: TaskSetChoice;
  level: InstructionLevel;
  models: RunModel[];
  jobs: number;
  sandbox: string;
  toolkitVersion: string;
  shard?: RunShard;
}

/** RUN_DIR/run.json; a rerun keeps the run's id and creation time. */
export async function writeRunConfig(outDir: string, input: RunConfigInput): Promise<RunConfig> {
  const file = join(outDir, RUN_FILE);
  let runId = randomBytes(6).toString("hex");
  let createdAt = new Date().toISOString();
  try {
    const prev = JSON.parse(await readFile(file, "utf8")) as RunConfig;
    if (typeof prev.run_id === "string" && prev.run_id !== "") runId = prev.run_id;
    if (typeof prev.created_at === "string") createdAt = prev.created_at;
  } catch {
    // a new run
  }
  const config: RunConfig = {
    run_id: runId,
    created_at: createdAt,
    toolkit_version: input.toolkitVersion,
    layout: RUN_LAYOUT,
    submissions: input.submissions,
    set: input.set,
    level: input.level,
    tasks: input.tasks.map((t) => t.manifest.id),
    task_sets: Object.fromEntries(input.tasks.map((t) => [t.manifest.id, readTaskSet(t.manifest)])),
    models: input.models,
    samples: Math.max(1, ...input.models.map((m) => m.samples)),
    jobs: input.jobs,
    sandbox: input.sandbox,
    ...(input.shard ? { shard: input.shard } : {}),
  };
  await writeJsonAtomic(file, config);
  return config;
}

/**
 * Sample folders of this run's tasks that no submission asks for any more
 * (fewer samples, --samples lowered, a model gone): left in place they would
 * count in the summary. Folders of tasks outside this run are left alone.
 */
export async function removeStaleResults(outDir: string, jobs: GradeJob[]): Promise<Problem[]> {
  const wanted = new Set(jobs.map((j) => locateSample(j.key)));
  const tasks = new Set(jobs.map((j) => j.key.task_id));
  const problems: Problem[] = [];
  const { samples } = await listSampleFolders(outDir, RUN_LAYOUT);
  const touched = new Set<string>();
  for (const s of samples) {
    if (!tasks.has(s.task) || wanted.has(s.rel)) continue;
    await rm(join(outDir, s.rel), { recursive: true, force: true });
    touched.add(s.modelFolder!);
    problems.push({ file: join(outDir, s.rel), message: `removed the result of sample '${s.sample}': the submissions no longer have it` });
  }
  // Empty task and model folders would read as "no sample" problems.
  for (const model of touched) {
    for (const task of tasks) await rmdir(join(outDir, RESULTS_DIR, model, task)).catch(() => undefined);
    await rmdir(join(outDir, RESULTS_DIR, model)).catch(() => undefined);
  }
  return problems;
}
