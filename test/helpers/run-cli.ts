import { execa } from "execa";
import { cp, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT, makeTempDir, pythonBin } from "./git-fixture.js";

export const CLI = join(REPO_ROOT, "dist", "cli", "main.js");

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`npx tsc -p .` first) and never throws on a non-zero exit. */
export async function runCli(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  const r = await execa("node", [CLI, ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: { NO_COLOR: "1", ...opts.env },
    reject: false,
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

export interface PytestResult {
  exitCode: number;
  output: string;
  passed: number;
  failed: number;
  /** Collection or import errors (a stub must fail in a test, not here). */
  errors: number;
}

/**
 * Runs grader tests the way the runner will: a fresh copy of `workspace`, the
 * grader folder at `<copy>/<mount>`, rootdir = the copy, the copy on sys.path.
 * `overlay` (e.g. a bundle's reference/) is copied over the workspace first.
 */
export async function runGrader(workspace: string, grader: string, opts: { overlay?: string; mount?: string } = {}): Promise<PytestResult> {
  const dir = await makeTempDir("grade");
  const mount = opts.mount ?? "lmr_tests";
  await cp(workspace, dir, { recursive: true });
  if (opts.overlay) await cp(opts.overlay, dir, { recursive: true });
  await mkdir(join(dir, mount), { recursive: true });
  await cp(grader, join(dir, mount), { recursive: true });
  // the tests reach the code through a candidate process, as in lmr's runs (no sandbox here)
  const byHand = join(REPO_ROOT, "python", "lmr_bridge", "by_hand.py");
  const r = await execa(pythonBin(), [byHand, "--tree", dir, "--", "-q", "--rootdir", dir, mount], {
    cwd: dir,
    env: { PYTHONDONTWRITEBYTECODE: "1" },
    reject: false,
    all: true,
  });
  const output = String(r.all);
  const count = (word: string): number => Number(new RegExp(`(\\d+) ${word}`).exec(output)?.[1] ?? 0);
  return { exitCode: r.exitCode ?? -1, output, passed: count("passed"), failed: count("failed"), errors: count("errors?") };
}

/** What a command printed with --json: one envelope (schema/cli-envelope.schema.json). */
export interface JsonEnvelope<T = any> {
  ok: boolean;
  command: string;
  data?: T;
  error?: { code: string; kind: string; message: string; file?: string; pointer?: string; hint?: string };
}

/** The envelope a --json run printed; a clear failure when stdout is not one. */
export function jsonEnvelope<T = any>(stdout: string): JsonEnvelope<T> {
  let v: unknown;
  try {
    v = JSON.parse(stdout);
  } catch {
    throw new Error(`stdout is not JSON:\n${stdout.slice(0, 2000)}`);
  }
  if (typeof v !== "object" || v === null || typeof (v as JsonEnvelope).ok !== "boolean" || typeof (v as JsonEnvelope).command !== "string") {
    throw new Error(`stdout is not an lmr --json envelope ({ok, command, data|error}):\n${stdout.slice(0, 2000)}`);
  }
  return v as JsonEnvelope<T>;
}

/** The `data` of a --json run's envelope: the command's result (or, on failure, what it found). */
export function jsonData<T = any>(stdout: string): T {
  return jsonEnvelope<T>(stdout).data as T;
}
