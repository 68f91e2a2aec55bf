import { nameModelFolder } from "./layout.js";
import { INSTRUCTION_LEVELS, isInstructionLevel } from "../manifest/level.js";
import { TASK_SETS } from "./task-set.js";
import { VERDICTS } from "./types.js";

/** Where a result.json was found: its task and sample folders, and its model folder (absent in layout 1). */
export interface ResultPlace {
  task: string;
  sample: string;
  modelFolder?: string;
}

/** The first reason `value` is not a SampleResult for the folder it was read from, checking the fields reports use. */
export function checkSampleResult(value: unknown, place: ResultPlace): { pointer: string; message: string } | undefined {
  if (!isRecord(value)) return { pointer: "", message: "not a JSON object" };
  for (const key of ["task_id", "sample", "model", "category"] as const) {
    if (typeof value[key] !== "string" || value[key] === "") return { pointer: `/${key}`, message: "missing or not a non-empty string" };
  }
  if (value.task_id !== place.task)
    return { pointer: "/task_id", message: `is ${JSON.stringify(value.task_id)} but the folder is ${JSON.stringify(place.task)}` };
  if (value.sample !== place.sample)
    return { pointer: "/sample", message: `is ${JSON.stringify(value.sample)} but the folder is ${JSON.stringify(place.sample)}` };
  if (place.modelFolder !== undefined && nameModelFolder(value.model as string) !== place.modelFolder) {
    return {
      pointer: "/model",
      message: `is ${JSON.stringify(value.model)}, whose folder is ${JSON.stringify(nameModelFolder(value.model as string))}, but it lies in ${JSON.stringify(place.modelFolder)}`,
    };
  }
  if (value.set !== undefined && !(TASK_SETS as readonly unknown[]).includes(value.set))
    return { pointer: "/set", message: `must be one of ${TASK_SETS.join(", ")}` };
  if (value.level !== undefined && !isInstructionLevel(value.level)) return { pointer: "/level", message: `must be one of ${INSTRUCTION_LEVELS.join(", ")}` };
  if (typeof value.verdict !== "string" || !(VERDICTS as readonly string[]).includes(value.verdict)) {
    return { pointer: "/verdict", message: `must be one of ${VERDICTS.join(", ")}` };
  }
  if (value.reason !== undefined && typeof value.reason !== "string") return { pointer: "/reason", message: "not a string" };
  if (typeof value.duration_s !== "number" || !Number.isFinite(value.duration_s) || value.duration_s < 0) {
    return { pointer: "/duration_s", message: "missing or not a number >= 0" };
  }
  const counts = value.counts;
  if (!isRecord(counts)) return { pointer: "/counts", message: "missing or not an object" };
  for (const key of ["passed", "failed", "errors", "skipped"]) {
    const n = counts[key];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0) return { pointer: `/counts/${key}`, message: "missing or not an integer >= 0" };
  }
  if (!Array.isArray(value.tests)) return { pointer: "/tests", message: "missing or not an array" };
  for (const [i, t] of value.tests.entries()) {
    if (!isRecord(t) || typeof t.id !== "string" || typeof t.status !== "string") return { pointer: `/tests/${i}`, message: "needs string id and status" };
  }
  if (typeof value.backend !== "string") return { pointer: "/backend", message: "missing or not a string" };
  return undefined;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
