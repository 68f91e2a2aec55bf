import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isRecord } from "./check-result.js";
import { JUDGE_FILE } from "./layout.js";

/**
 * The judge's three classes, worst first: the logic is not the paper's; the
 * logic is right but the code has implementation errors; fully correct.
 */
export type JudgeClass = "incorrect-logic" | "implementation-error" | "fully-correct";
export const JUDGE_CLASSES: readonly JudgeClass[] = ["incorrect-logic", "implementation-error", "fully-correct"];

export const JUDGE_FILE_VERSION = 1;

/** One judge call: its class and rationale, or why it gave none (an infra vote: API failure, or no reply that parsed). */
export interface JudgeVote {
  vote: number;
  class?: JudgeClass;
  rationale?: string;
  /** Why this vote has no class. */
  error?: string;
  cached: boolean;
  /** HTTP tries this run made for the vote, retries and re-asks after an unparsable reply included (0 when cached). */
  requests: number;
  /** Replies that came back but did not parse or match the reply schema; each was asked again. */
  parse_failures: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

/**
 * RUN_DIR/results/<model>/<task>/<sample>/judge.json. `status`:
 * judged — at least one vote has a class; `majority` and `agreement` are set;
 * no-code — the submission gave no code to judge (no request was made);
 * infra — no vote got a class (our side or the judge API's): rerun lmr judge.
 */
export interface SampleJudgement {
  schema_version: number;
  task_id: string;
  model: string;
  sample: string;
  judge_model: string;
  /** The submission_hash of the result.json judged: a judgement of another submission is stale. */
  submission_hash: string;
  /** Hash of the prompt, judge model, parameters and votes asked for: the resume key. */
  judge_key: string;
  status: "judged" | "no-code" | "infra";
  reason?: string;
  votes: JudgeVote[];
  /** The class most votes gave (ties go to the worse class); null unless judged. */
  majority: JudgeClass | null;
  /** Share of the classified votes that gave the majority class; null unless judged. */
  agreement: number | null;
  /** Totals over the votes. */
  requests: number;
  parse_failures: number;
  infra_votes: number;
  /** Tokens of the replies this judgement's own requests got (a vote shared with a sample of the same code counts once, there); cost with --price. */
  usage: { prompt_tokens: number; completion_tokens: number; cost_usd?: number };
  finished_at: string;
  toolkit_version: string;
}

/** The first reason `value` is not a judge.json for the sample (by task, model, sample), checking what readers use. */
export function checkSampleJudgement(
  value: unknown,
  key: { task_id: string; model: string; sample: string },
): { pointer: string; message: string } | undefined {
  if (!isRecord(value)) return { pointer: "", message: "not a JSON object" };
  if (value.schema_version !== JUDGE_FILE_VERSION) return { pointer: "/schema_version", message: `must be ${JUDGE_FILE_VERSION}` };
  for (const k of ["task_id", "model", "sample"] as const)
    if (value[k] !== key[k]) return { pointer: `/${k}`, message: `is ${JSON.stringify(value[k])} but the sample's result.json says ${JSON.stringify(key[k])}` };
  for (const k of ["judge_model", "submission_hash", "judge_key"] as const)
    if (typeof value[k] !== "string" || value[k] === "") return { pointer: `/${k}`, message: "missing or not a non-empty string" };
  if (!["judged", "no-code", "infra"].includes(value.status as string)) return { pointer: "/status", message: "must be judged, no-code or infra" };
  if (!Array.isArray(value.votes)) return { pointer: "/votes", message: "missing or not an array" };
  for (const [i, v] of value.votes.entries()) {
    if (!isRecord(v)) return { pointer: `/votes/${i}`, message: "not an object" };
    if (v.class !== undefined && !(JUDGE_CLASSES as readonly unknown[]).includes(v.class))
      return { pointer: `/votes/${i}/class`, message: `must be one of ${JUDGE_CLASSES.join(", ")}` };
    if (v.class === undefined && typeof v.error !== "string") return { pointer: `/votes/${i}`, message: "a vote without a class needs an error" };
  }
  if (value.status === "judged") {
    if (!(JUDGE_CLASSES as readonly unknown[]).includes(value.majority))
      return { pointer: "/majority", message: `must be one of ${JUDGE_CLASSES.join(", ")} when status is judged` };
    if (typeof value.agreement !== "number" || !(value.agreement > 0 && value.agreement <= 1))
      return { pointer: "/agreement", message: "must be a number in (0, 1] when status is judged" };
  } else if (value.majority !== null) return { pointer: "/majority", message: "must be null unless status is judged" };
  for (const k of ["requests", "parse_failures", "infra_votes"] as const) {
    const n = value[k];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0) return { pointer: `/${k}`, message: "missing or not an integer >= 0" };
  }
  const u = value.usage;
  if (!isRecord(u) || typeof u.prompt_tokens !== "number" || typeof u.completion_tokens !== "number")
    return { pointer: "/usage", message: "needs numbers prompt_tokens and completion_tokens" };
  return undefined;
}

export type ReadJudgement =
  | { ok: true; judgement: SampleJudgement }
  | { ok: false; missing: true }
  | { ok: false; missing: false; problem: { file: string; pointer?: string; message: string } };

/** judge.json of one sample folder (`rel`, relative to the run folder); missing is not a problem, broken is. */
export async function readSampleJudgement(runDir: string, rel: string, key: { task_id: string; model: string; sample: string }): Promise<ReadJudgement> {
  const file = `${rel}/${JUDGE_FILE}`;
  let text: string;
  try {
    text = await readFile(join(runDir, file), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { ok: false, missing: true };
    return { ok: false, missing: false, problem: { file, message: `cannot read: ${(err as Error).message}` } };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, missing: false, problem: { file, message: `invalid JSON (${(err as Error).message})` } };
  }
  const wrong = checkSampleJudgement(value, key);
  if (wrong) return { ok: false, missing: false, problem: { file, pointer: wrong.pointer, message: wrong.message } };
  return { ok: true, judgement: value as SampleJudgement };
}
