import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { checkSampleResult, type ResultPlace } from "./check-result.js";
import { RESULT_FILE, RESULTS_DIR, compareIds } from "./layout.js";
import type { SampleResult } from "./types.js";

/** A sample folder found under results/, with its path relative to the run folder. */
export interface FoundSample extends ResultPlace {
  rel: string;
}

/**
 * Every sample folder under RUN_DIR/results in the given layout (2:
 * <model>/<task>/<sample>, 1: <task>/<sample>), sorted, hidden entries
 * (atomic-write leftovers) skipped. `empty` lists task folders with no sample.
 */
export async function listSampleFolders(runDir: string, layout: number): Promise<{ samples: FoundSample[]; empty: string[] }> {
  const samples: FoundSample[] = [];
  const empty: string[] = [];
  const root = join(runDir, RESULTS_DIR);
  const models = layout >= 2 ? await listDirs(root) : [undefined];
  for (const modelFolder of models) {
    const base = modelFolder === undefined ? RESULTS_DIR : `${RESULTS_DIR}/${modelFolder}`;
    for (const task of await listDirs(join(runDir, base))) {
      const sampleDirs = await listDirs(join(runDir, base, task));
      if (sampleDirs.length === 0) empty.push(`${base}/${task}`);
      for (const sample of sampleDirs) samples.push({ task, sample, rel: `${base}/${task}/${sample}`, ...(modelFolder === undefined ? {} : { modelFolder }) });
    }
  }
  return { samples, empty };
}

/** Why a sample folder has no usable result.json. */
export interface UnreadableResult {
  file: string;
  pointer?: string;
  message: string;
}

/** Read and check one sample's result.json; a missing, broken or misplaced one is a value, not an exception. */
export async function readSampleResult(
  runDir: string,
  found: FoundSample,
): Promise<{ ok: true; result: SampleResult } | { ok: false; problem: UnreadableResult }> {
  const file = `${found.rel}/${RESULT_FILE}`;
  let text: string;
  try {
    text = await readFile(join(runDir, file), "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, problem: { file, message: code === "ENOENT" ? "result.json is missing" : `cannot read: ${(err as Error).message}` } };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: { file, message: `invalid JSON (${(err as Error).message})` } };
  }
  const wrong = checkSampleResult(value, found);
  if (wrong !== undefined) return { ok: false, problem: { file, pointer: wrong.pointer, message: wrong.message } };
  return { ok: true, result: value as SampleResult };
}

async function listDirs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => e.name)
    .sort(compareIds);
}
