import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { toolkitPath } from "../../dist/core/paths.js";
import { loadTask } from "../../dist/manifest/load.js";
import { loadPytestTasks } from "./example-tasks.js";
import type { ResolvedTask } from "../../dist/manifest/types.js";
import { defaultCacheDir } from "../../dist/source/cache.js";
import type { VerificationRecord } from "../../dist/verify/record.js";
import { verifyTask, type VerifyOptions } from "../../dist/verify/verify-task.js";
import type { BenchContext, BenchResult } from "./types.js";

/** The pilot tasks when their upstreams are mirrored; else the offline examples. */
const PILOTS = [
  "dpo-preference-loss",
  "adalora-svdlinear-forward",
  "gdpzero-find-best-action",
  "cad-context-aware-sampling",
  "knowprob-remove-object-subject-overlap",
  "knowprob-entity-overlap",
  "bertscore-greedy-cos-idf",
];

/** What must be equal between the two paths: the outcome of every step and the mutants' fates. */
function verdictOf(r: VerificationRecord): string {
  const m = r.steps.mutants;
  const notKilled = [...m.survivors, ...(m.uncovered ?? []), ...(m.equivalent ?? [])].map((s) => s.id).sort();
  return JSON.stringify({
    ok: r.ok,
    reference: r.steps.reference.runs.map((x) => x.status),
    stub: r.steps.stub.runs.map((x) => x.status),
    alternatives: r.steps.alternatives.alternatives.map((a) => [a.name, a.status]),
    killed: m.killed,
    total: m.total,
    notKilled,
  });
}

/**
 * `lmr verify --force` of the pilot tasks, cold (no remembered killers), the fast path
 * (coverage-chosen tests, first kill, fork server) against the old per-run path
 * (every mutant a fresh process on the whole suite), task by task in turn, on the
 * same machine in the same run. Goal: >= 3x faster with equal outcomes.
 */
export async function runVerifyBench(ctx: BenchContext): Promise<BenchResult> {
  const mirror = process.env.LMR_MIRROR ?? (existsSync("/work/.mirror") ? "/work/.mirror" : undefined);
  const tasksDir = toolkitPath("tasks");
  const useTasks = mirror !== undefined && PILOTS.every((id) => existsSync(join(tasksDir, id, "task.json")));
  const all: ResolvedTask[] = [];
  if (useTasks) for (const id of PILOTS) all.push(await loadTask(join(tasksDir, id)));
  else all.push(...(await loadPytestTasks(resolve(toolkitPath("examples", "tasks")))));
  const tasks = ctx.quick ? all.slice(0, 2) : all;
  const cacheDir = process.env.LMR_CACHE ?? defaultCacheDir();
  const base: VerifyOptions = { force: true, write: false, sandbox: "bwrap", ...(mirror ? { mirror } : {}) };
  const notes: string[] = [];
  let fastTotal = 0;
  let oldTotal = 0;
  let equal = 0;
  for (const task of tasks) {
    await rm(join(cacheDir, "verify"), { recursive: true, force: true });
    const t0 = performance.now();
    const fast = await verifyTask(task, { ...base, fastMutants: true });
    const t1 = performance.now();
    const old = await verifyTask(task, { ...base, fastMutants: false });
    const t2 = performance.now();
    const same = verdictOf(fast.record) === verdictOf(old.record);
    if (same) equal++;
    fastTotal += (t1 - t0) / 1000;
    oldTotal += (t2 - t1) / 1000;
    const line = `${task.manifest.id}: fast ${((t1 - t0) / 1000).toFixed(1)} s, old ${((t2 - t1) / 1000).toFixed(1)} s, x${((t2 - t1) / (t1 - t0)).toFixed(2)}, mutants ${fast.record.steps.mutants.duration_s.toFixed(1)} s vs ${old.record.steps.mutants.duration_s.toFixed(1)} s, outcomes ${same ? "equal" : "DIFFER"}`;
    ctx.log(line);
    notes.push(line);
    if (!same) notes.push(`  fast ${verdictOf(fast.record)}\n  old  ${verdictOf(old.record)}`);
  }
  notes.push(
    `${tasks.length} ${useTasks ? "pilot" : "example"} tasks: fast ${fastTotal.toFixed(1)} s, old ${oldTotal.toFixed(1)} s, speed-up x${(oldTotal / fastTotal).toFixed(2)} (goal >= 3); outcomes equal on ${equal}/${tasks.length}`,
  );
  return { name: "verify", rows: [], notes };
}
