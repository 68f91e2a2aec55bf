import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import { ARRAYS_FILE, CALLS_FILE } from "../manifest/fixture-claims.js";
import type { ResolvedTask } from "../manifest/types.js";

export { ARRAYS_FILE, CALLS_FILE };

/**
 * fixtures/calls.json as written by python/lmr_record (the codec's FORMAT). The
 * TypeScript side reads only the metadata; argument and return values are codec
 * trees that only the Python codec interprets.
 */
const CALLS_FORMAT = "lmr-calls/1";

export type RecordedKind = "function" | "method" | "staticmethod" | "classmethod" | "property";

export interface RecordedCall {
  index: number;
  arg_names: string[];
  args: unknown[];
  kwargs: Record<string, unknown>;
  result?: unknown;
  raises?: { type: string; message: string };
  mutated?: { args: Record<string, unknown>; kwargs: Record<string, unknown> };
  self?: { before: Record<string, unknown>; after?: Record<string, unknown> };
  /** A generator target: the items it yielded, in order. */
  yields?: unknown[];
  /** A generator the driver closed before it ended (the replay closes it after as many items). */
  closed?: boolean;
  /** Random-number states the call started from, for calls that drew random numbers. */
  rng?: Record<string, unknown>;
}

export interface RecordedTarget {
  /** The manifest target's file (a `Class` target yields one entry per method, all with its file). */
  file: string;
  /** `name` or `Class.method`. */
  symbol: string;
  module: string;
  owner: string | null;
  name: string;
  kind: RecordedKind;
  async: boolean;
  /** Present (true) for a target that yields. */
  generator?: boolean;
  max_calls: number;
  calls_seen: number;
  calls_recorded: number;
  self_attrs: string[] | null;
  skip_args: string[];
  calls: RecordedCall[];
}

export interface CallsFile {
  format: string;
  task: string;
  driver: { file: string } | { code: string };
  seed: number;
  seeded: string[];
  environment: Record<string, string>;
  /** The .npz next to calls.json that holds the arrays, or null when there are none. */
  arrays: string | null;
  targets: RecordedTarget[];
}

/** Reads and checks TASK/fixtures/calls.json; LmrError with a hint when it is missing or foreign. */
export async function readCallsFile(task: ResolvedTask, rel = CALLS_FILE): Promise<CallsFile> {
  const path = join(task.dir, rel);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LmrError({
      code: "calls/missing",
      file: path,
      message: code === "ENOENT" ? "no recorded calls" : `cannot read the recorded calls (${code ?? String(err)})`,
      hint: `run \`lmr record ${task.dir} --driver-file driver.py\` first`,
      cause: err,
    });
  }
  let data: Partial<CallsFile>;
  try {
    data = JSON.parse(text) as Partial<CallsFile>;
  } catch (err) {
    throw new LmrError({ code: "calls/bad-json", file: path, message: `not valid JSON: ${(err as Error).message}`, hint: "re-record it with `lmr record`" });
  }
  if (data.format !== CALLS_FORMAT || !Array.isArray(data.targets)) {
    throw new LmrError({
      code: "calls/bad-format",
      file: path,
      pointer: "/format",
      message: `format is ${JSON.stringify(data.format)}, expected "${CALLS_FORMAT}"`,
      hint: "re-record it with `lmr record` (this lmr reads only its own format)",
    });
  }
  return data as CallsFile;
}
