import { resolve } from "node:path";
import { LmrError } from "../core/errors.js";
import { sha256 } from "../core/hash.js";
import type { TaskSet } from "../manifest/types.js";
import { compareIds, locateSample } from "../run-folder/index.js";
import { loadRun, modelKey, type DeclaredModel, type LoadedRun } from "./read-run.js";
import type { SummaryProblem } from "./types.js";

/**
 * Reads several run folders as one run: the shards of `lmr eval --shard I/N`
 * (same plan, each index once), or whole runs over different samples. Refuses,
 * naming both folders: a sample present in two of them, shards of different
 * plans or counts, the same shard twice, and shards mixed with whole runs.
 * Missing shards are a problem in the summary, not an error: a partial merge
 * is worth reading while the last shards still run.
 */
export async function loadRuns(dirs: string[]): Promise<LoadedRun> {
  const abs = dirs.map((d) => resolve(d));
  const runs = await Promise.all(abs.map((d) => loadRun(d)));
  if (runs.length === 1) return runs[0]!;
  checkShards(abs, runs);
  const owner = new Map<string, string>();
  for (const [i, run] of runs.entries()) {
    for (const r of run.results) {
      // the same model, task and sample at two levels are two samples (reported apart), not an overlap
      const rel = `${r.level ?? ""}:${locateSample(r)}`;
      const first = owner.get(rel);
      if (first !== undefined) {
        throw new LmrError({
          code: "report/overlapping-runs",
          message: `task '${r.task_id}', model '${r.model}', sample '${r.sample}' is in both ${first} and ${abs[i]}`,
          file: `${abs[i]}/${rel}`,
          hint: "merge folders that each hold different samples: the shards of one `lmr eval --shard I/N` plan, or runs over different tasks or models",
        });
      }
      owner.set(rel, abs[i]!);
    }
  }
  return mergeLoaded(abs, runs);
}

function checkShards(dirs: string[], runs: LoadedRun[]): void {
  const sharded = runs.map((r, i) => ({ dir: dirs[i]!, shard: r.shard }));
  const whole = sharded.find((s) => s.shard === undefined);
  const part = sharded.find((s) => s.shard !== undefined);
  if (whole && part) {
    throw new LmrError({
      code: "report/mismatched-runs",
      message: `${part.dir} is shard ${part.shard!.index}/${part.shard!.count} of a run, ${whole.dir} is a whole run`,
      file: `${whole.dir}/run.json`,
      pointer: "/shard",
      hint: "merge either the shards of one plan or whole runs, not both",
    });
  }
  if (!part) return;
  const first = sharded[0]!;
  const seen = new Map<number, string>();
  for (const s of sharded) {
    if (s.shard!.plan !== first.shard!.plan || s.shard!.count !== first.shard!.count) {
      throw new LmrError({
        code: "report/mismatched-runs",
        message: `${s.dir} is shard ${s.shard!.index}/${s.shard!.count} of plan ${s.shard!.plan.slice(0, 12)}, ${first.dir} is shard ${first.shard!.index}/${first.shard!.count} of plan ${first.shard!.plan.slice(0, 12)}: not parts of one run`,
        file: `${s.dir}/run.json`,
        pointer: "/shard",
        hint: "every shard must be graded with the same submissions, tasks, sandbox, interpreter and N; regrade the odd one with the others' flags",
      });
    }
    const twice = seen.get(s.shard!.index);
    if (twice !== undefined)
      throw new LmrError({
        code: "report/overlapping-runs",
        message: `${twice} and ${s.dir} are both shard ${s.shard!.index}/${s.shard!.count}`,
        file: `${s.dir}/run.json`,
        pointer: "/shard/index",
        hint: "pass each shard's folder once",
      });
    seen.set(s.shard!.index, s.dir);
  }
}

function mergeLoaded(dirs: string[], runs: LoadedRun[]): LoadedRun {
  const layouts = [...new Set(runs.map((r) => r.layout))];
  if (layouts.length > 1) {
    throw new LmrError({
      code: "report/mismatched-runs",
      message: `the run folders have results in layouts ${layouts.join(" and ")}`,
      file: dirs[runs.findIndex((r) => r.layout !== runs[0]!.layout)],
      hint: "regrade the older folder with this lmr before merging",
    });
  }
  const problems: SummaryProblem[] = [];
  runs.forEach((r, i) => {
    // A shard's own "coverage is checked at the merge" note is answered by this merge.
    for (const p of r.problems) if (!(p.pointer === "/shard" && p.file === "run.json")) problems.push({ ...p, file: `${dirs[i]}/${p.file ?? ""}` });
  });
  const shard = runs[0]!.shard;
  if (shard) {
    const have = new Set(runs.map((r) => r.shard!.index));
    const missing = Array.from({ length: shard.count }, (_, i) => i + 1).filter((i) => !have.has(i));
    if (missing.length > 0)
      problems.push({
        message: `shard${missing.length > 1 ? "s" : ""} ${missing.map((i) => `${i}/${shard.count}`).join(", ")} of plan ${shard.plan.slice(0, 12)} ${missing.length > 1 ? "are" : "is"} not in this report`,
        hint: "pass every shard's run folder to lmr report",
      });
  }
  const models = new Map<string, DeclaredModel>();
  for (const r of runs) {
    for (const m of r.models) {
      const key = modelKey(m);
      const prev = models.get(key);
      const samples = Math.max(prev?.samples ?? 0, m.samples ?? 0);
      const perTask = mergeTaskSamples(prev, m, r.requested_tasks);
      models.set(key, {
        model: m.model,
        dir: m.dir,
        ...(m.level ? { level: m.level } : {}),
        ...(samples > 0 ? { samples } : {}),
        ...(perTask ? { task_samples: perTask } : {}),
      });
    }
  }
  const levels = new Set(runs.map((r) => r.run.level));
  const taskSets: Record<string, TaskSet> = Object.assign({}, ...runs.map((r) => r.task_sets));
  const infos = runs.map((r) => r.run);
  const first = infos[0]!;
  const created = infos
    .map((r) => r.created_at)
    .filter((c): c is string => c !== undefined)
    .sort()[0];
  const jobs = infos.reduce((a, r) => a + (r.jobs ?? 0), 0);
  const samples = Math.max(0, ...infos.map((r) => r.samples_per_task ?? 0));
  return {
    run: {
      // A merge of one plan's shards is named by the plan; any other merge by its members.
      run_id: shard
        ? `plan-${shard.plan.slice(0, 12)}`
        : `merged-${sha256(
            infos
              .map((r) => r.run_id)
              .sort()
              .join("\n"),
          ).slice(0, 12)}`,
      ...(created ? { created_at: created } : {}),
      ...(first.toolkit_version ? { toolkit_version: first.toolkit_version } : {}),
      ...(first.submissions ? { submissions: first.submissions } : {}),
      ...(first.set ? { set: first.set } : {}),
      ...(levels.size === 1 && first.level ? { level: first.level } : {}),
      ...(samples > 0 ? { samples_per_task: samples } : {}),
      ...(jobs > 0 ? { jobs } : {}),
      ...(first.sandbox ? { sandbox: first.sandbox } : {}),
    },
    layout: layouts[0]!,
    requested_tasks: [...new Set(runs.flatMap((r) => r.requested_tasks))].sort(compareIds),
    task_sets: taskSets,
    models: [...models.values()],
    results: runs.flatMap((r) => r.results),
    judgements: Object.assign({}, ...runs.map((r) => r.judgements ?? {})),
    sampleDirs: Object.assign({}, ...runs.map((r) => r.sampleDirs ?? {})),
    generation: Object.assign({}, ...runs.map((r) => r.generation ?? {})),
    problems,
  };
}

/**
 * Samples per task of a model declared by several merged runs, each over its own tasks or samples:
 * per task, the most any of them asked for (a run without counts per task asked its `samples` of
 * each task it lists), so a task is held to its own run's count, not to the largest of the merge.
 */
function mergeTaskSamples(prev: DeclaredModel | undefined, next: DeclaredModel, nextTasks: string[]): Record<string, number> | undefined {
  const asked = next.task_samples ?? (next.samples !== undefined ? Object.fromEntries(nextTasks.map((t) => [t, next.samples!])) : {});
  const out: Record<string, number> = { ...(prev?.task_samples ?? {}) };
  for (const [task, n] of Object.entries(asked)) out[task] = Math.max(out[task] ?? 0, n);
  return Object.keys(out).length > 0 ? out : undefined;
}
