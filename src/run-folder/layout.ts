import { join } from "node:path";
import { sha256 } from "../core/hash.js";
import type { SampleKey } from "./types.js";

/**
 * The run folder's fixed names. Layout 2 (this one):
 *   RUN_DIR/run.json, summary.json, bundles/<task>/,
 *   results/<model-folder>/<task>/<sample>/{result.json, log.txt, junit.xml,
 *     submission.diff (when the submission applied), judge.json (lmr judge), agent/ (an agent's logs)}
 * Layout 1 (lmr before models had folders, read-only): results/<task>/<sample>/.
 */
export const RUN_LAYOUT = 2;
export const RUN_FILE = "run.json";
export const SUMMARY_FILE = "summary.json";
export const BUNDLES_DIR = "bundles";
export const RESULTS_DIR = "results";
export const RESULT_FILE = "result.json";
export const LOG_FILE = "log.txt";
export const JUNIT_FILE = "junit.xml";
/** The applied submission as a unified diff against the masked target files (a/PATH, b/PATH). */
export const DIFF_FILE = "submission.diff";
/** lmr judge's verdict on the sample (see judge-file.ts). */
export const JUDGE_FILE = "judge.json";
/** An agent's own logs for the sample, any files (lmr agent run). */
export const AGENT_DIR = "agent";
/** RUN_DIR/.lock: who is grading into this run folder. */
export const LOCK_FILE = ".lock";
/** RUN_DIR/.scratch: the runner's per-sample copies; everything in it belongs to the run holding the lock. */
export const SCRATCH_DIR = ".scratch";

/** A sample id names a folder: a short slug, never a path. */
export const SAMPLE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Model names that are their own folder name: lower case, so no two differ only by case on macOS or Windows. */
const PLAIN_MODEL = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * The folder of a model under results/. A plain lower-case name is used as
 * it is; any other name (`openai/gpt-4o`, `Qwen2.5-7B`) becomes a slug plus 8
 * hex digits of its hash, so distinct names never share a folder and a folder
 * never escapes results/. result.json keeps the name itself.
 */
export function nameModelFolder(model: string): string {
  if (PLAIN_MODEL.test(model)) return model;
  const slug = model
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 48)
    .replace(/[-._]+$/, "");
  return `${slug || "model"}-${sha256(model).slice(0, 8)}`;
}

/** results/<model-folder>/<task>/<sample>, relative to the run folder, with / separators. */
export function locateSample(key: SampleKey): string {
  return `${RESULTS_DIR}/${nameModelFolder(key.model)}/${key.task_id}/${key.sample}`;
}

/** The absolute folder of one sample's files. */
export function locateSampleDir(runDir: string, key: SampleKey): string {
  return join(runDir, locateSample(key));
}

/** "task 'a', model 'm', sample '0'": how messages name a sample. */
export function describeSampleKey(key: SampleKey): string {
  return `task '${key.task_id}', model '${key.model}', sample '${key.sample}'`;
}

/** Sort "2" before "10": sample ids are numbers written as strings. */
export function compareIds(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}
