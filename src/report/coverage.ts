import { compareIds } from "../run-folder/index.js";
import { modelKey, type LoadedRun } from "./read-run.js";
import type { ModelSummary, SummaryProblem } from "./types.js";

const RERUN = "re-run `lmr eval` on this run folder";

/**
 * What the run folder lacks against what run.json asked for, per model:
 * a requested task a model has no result for, and a task where a model has
 * fewer readable samples than run.json declares for that model and task. Several
 * models sharing a run is never itself a gap: each is held to its own count.
 */
export function checkCoverage(run: LoadedRun, models: ModelSummary[], problems: SummaryProblem[]): void {
  if (run.shard) {
    // One part of a run lacks the other parts' samples by design: coverage is a question for the merge.
    problems.push({
      file: "run.json",
      pointer: "/shard",
      message: `this folder holds shard ${run.shard.index}/${run.shard.count} of a run; what it lacks is checked when the shards are reported together`,
      hint: "lmr report RUN_1 … RUN_N merges the shards' folders",
    });
    return;
  }
  const folder = (m: ModelSummary | undefined, task: string): string => (m?.dir === undefined ? `results/${task}` : `results/${m.dir}/${task}`);
  const requested = new Set(run.requested_tasks);
  for (const id of run.requested_tasks) {
    if (models.length === 0)
      problems.push({ file: folder(undefined, id), message: "run.json lists this task but no readable result exists; it is left out", hint: RERUN });
    for (const m of models) {
      if (m.tasks.some((t) => t.task_id === id)) continue;
      const whose = run.layout === 1 ? "no readable result exists" : `model '${m.model}' has no readable result for it`;
      problems.push({ file: folder(m, id), message: `run.json lists this task but ${whose}; it is left out`, hint: RERUN });
    }
  }
  if (run.requested_tasks.length > 0) {
    const unlisted = new Set(models.flatMap((m) => m.tasks.map((t) => t.task_id)).filter((id) => !requested.has(id)));
    for (const id of [...unlisted].sort(compareIds)) {
      problems.push({ file: run.layout === 1 ? `results/${id}` : `results/*/${id}`, message: "this task has results but run.json does not list it" });
    }
  }
  if (run.layout !== 1) {
    const declared = new Set(run.models.map((m) => modelKey(m)));
    for (const m of models) {
      if (!declared.has(modelKey(m)))
        problems.push({ file: `results/${m.dir ?? ""}`, message: `model '${m.model}' has results but run.json does not list it` });
      else if (m.totals.samples === 0 && run.requested_tasks.length === 0)
        problems.push({ file: `results/${m.dir ?? ""}`, message: `run.json lists model '${m.model}' but no readable result of it exists`, hint: RERUN });
    }
  }
  for (const m of models) {
    const declared = run.models.find((d) => modelKey(d) === modelKey(m));
    for (const t of m.tasks) {
      // each task is held to its own count: a model may have more samples of one task than another
      const asked = declared?.task_samples?.[t.task_id] ?? m.samples_per_task;
      if (asked === undefined || t.samples >= asked) continue;
      const of = run.layout === 1 ? "" : ` of model '${m.model}'`;
      problems.push({ file: folder(m, t.task_id), message: `${t.samples} of ${asked} samples${of} have a readable result.json` });
    }
  }
}
