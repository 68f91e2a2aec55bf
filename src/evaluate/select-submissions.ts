import { groupBy } from "../core/collections.js";
import type { Problem } from "../core/errors.js";
import type { ResolvedTask } from "../manifest/types.js";
import { measureEditDistance } from "../manifest/suggest.js";
import { compareIds, nameModelFolder, type RunModel } from "../run-folder/index.js";
import type { Submission } from "./submissions.js";

export interface SelectInput {
  /** The submissions path, for messages. */
  file: string;
  submissions: Submission[];
  /** Tasks this run grades. */
  tasks: readonly ResolvedTask[];
  /** Every task id the submissions may name (the whole tasks folder); default: the run's tasks. */
  knownTaskIds?: readonly string[];
  /** Take at most this many samples per (task, model). */
  samples?: number;
}

export interface SelectedSubmissions {
  models: RunModel[];
  /** task id → model → its samples, in submission order, cut to `samples`. */
  byTask: Map<string, Map<string, Submission[]>>;
  /** Rows that are fine but not graded in this run (their task is outside the selection). */
  notes: Problem[];
}

/**
 * Decides which rows this run grades, or why the submissions are bad input:
 * an id that names no task at all (with the nearest ids), two model names that
 * would share a results folder, or no row at all. Rows for known tasks left
 * out by --tasks / --set are not graded and are listed in `notes`.
 */
export function selectSubmissions(input: SelectInput): { ok: true; value: SelectedSubmissions } | { ok: false; problems: Problem[] } {
  const selected = new Set(input.tasks.map((t) => t.manifest.id));
  const known = [...new Set([...(input.knownTaskIds ?? []), ...selected])];
  const knownSet = new Set(known);
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  if (input.submissions.length === 0) {
    problems.push({
      file: input.file,
      message: "the submissions hold no rows",
      hint: "give one JSONL row per (task, model, sample), or a folder with one workspace per task id",
    });
  }

  const unknown = groupBy(
    input.submissions.filter((s) => !knownSet.has(s.task_id)),
    (s) => s.task_id,
  );
  for (const [id, rows] of unknown) {
    const near = findNearIds(id, known);
    const more =
      rows.length > 1
        ? ` (${rows.length} rows; also line ${rows
            .slice(1, 4)
            .map((r) => r.origin.split(":").pop())
            .join(", ")}${rows.length > 4 ? ", …" : ""})`
        : "";
    problems.push({
      file: rows[0]!.origin,
      pointer: rows[0]!.origin.includes(":") ? "/task_id" : undefined,
      message: `no task has the id '${id}'${more}${near.length > 0 ? `; did you mean ${near.map((n) => `'${n}'`).join(" or ")}?` : ""}`,
      hint: "fix the task id, or point --tasks-dir at the folder that holds this task",
    });
  }

  const outside = groupBy(
    input.submissions.filter((s) => knownSet.has(s.task_id) && !selected.has(s.task_id)),
    (s) => s.task_id,
  );
  if (outside.size > 0) {
    const rows = [...outside.values()].reduce((a, r) => a + r.length, 0);
    notes.push({
      file: input.file,
      message: `${rows} row(s) for ${outside.size} task(s) outside this run's selection are not graded: ${[...outside.keys()].sort(compareIds).join(", ")}`,
      hint: "widen --tasks / --set to grade them",
    });
  }

  const mine = input.submissions.filter((s) => selected.has(s.task_id));
  const byTask = new Map<string, Map<string, Submission[]>>();
  for (const s of mine) {
    const perModel = byTask.get(s.task_id) ?? new Map<string, Submission[]>();
    const list = perModel.get(s.model) ?? [];
    if (input.samples === undefined || list.length < input.samples) list.push(s);
    perModel.set(s.model, list);
    byTask.set(s.task_id, perModel);
  }

  const allModels = [...new Set(input.submissions.filter((s) => knownSet.has(s.task_id)).map((s) => s.model))];
  const models: RunModel[] = [];
  const folders = new Map<string, string>();
  for (const model of allModels.sort(compareIds)) {
    const counts = [...byTask.values()].map((m) => m.get(model)?.length ?? 0);
    if (counts.every((n) => n === 0)) {
      notes.push({ file: input.file, message: `model '${model}' has rows only for tasks outside this run's selection; it is not graded` });
      continue;
    }
    const dir = nameModelFolder(model);
    const other = folders.get(dir.toLowerCase());
    if (other !== undefined) {
      problems.push({
        file: input.file,
        pointer: "/model",
        message: `models '${other}' and '${model}' would share the results folder '${dir}'`,
        hint: "rename one of the two models",
      });
    }
    folders.set(dir.toLowerCase(), model);
    // a task without a row gets one invalid sample: it counts 1
    const perTask = [...selected].sort(compareIds).map((id): [string, number] => [id, Math.max(1, byTask.get(id)?.get(model)?.length ?? 0)]);
    const most = Math.max(...counts);
    const uneven = perTask.some(([, n]) => n !== most);
    models.push({ model, dir, samples: most, ...(uneven ? { task_samples: Object.fromEntries(perTask) } : {}) });
  }
  if (problems.length === 0 && input.submissions.length > 0 && models.length === 0) {
    problems.push({
      file: input.file,
      message: "none of the rows is for a task of this run",
      hint: "check --tasks / --set, or the task ids in the submissions",
    });
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: { models, byTask, notes } };
}

/** Known ids close enough to `id` to be what was meant, nearest first (at most three). */
export function findNearIds(id: string, known: readonly string[]): string[] {
  const scored = known.map((k) => ({ k, d: measureEditDistance(id, k) })).filter(({ k, d }) => d <= Math.max(2, Math.floor(k.length / 3)));
  scored.sort((a, b) => a.d - b.d || compareIds(a.k, b.k));
  return scored.slice(0, 3).map((s) => s.k);
}
