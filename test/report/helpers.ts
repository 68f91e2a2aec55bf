import { cp, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

const REPO_ROOT = resolve(fileURLToPath(new URL(".", import.meta.url)), "..", "..");
export const FIXTURE_RUN = join(REPO_ROOT, "test", "fixtures", "runs", "basic");
/** The basic run as an lmr before per-model folders wrote it (layout 1: results/<task>/<sample>/). */
export const LEGACY_RUN = join(REPO_ROOT, "test", "fixtures", "runs", "legacy-v1");
/** Two models over a core and an extended task; one model lacks a sample (see the fixtures' README). */
export const TWO_MODEL_RUN = join(REPO_ROOT, "test", "fixtures", "runs", "two-models");
/** results/<model folder> of the basic run's one model. */
export const BASIC_RESULTS = "results/example-model-1";
const CLI = join(REPO_ROOT, "dist", "cli", "main.js");

/** A fresh copy of a fixture run folder, so tests may write summary.json and break files. */
export async function copyFixtureRun(src: string = FIXTURE_RUN): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const base = await mkdtemp(join(tmpdir(), "lmr-report-"));
  const dir = join(base, "run");
  await cp(src, dir, { recursive: true });
  return { dir, cleanup: () => rm(base, { recursive: true, force: true }) };
}

export async function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    await stat(CLI);
  } catch {
    throw new Error(`${CLI} is missing: build first with \`npx tsc -p .\``);
  }
  const r = await execa("node", [CLI, ...args], { reject: false, env: { NO_COLOR: "1" } });
  return { code: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
}
