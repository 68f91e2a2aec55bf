import { execa } from "execa";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";
import { listFiles } from "../../src/core/hash.js";
import type { TaskManifest } from "../../src/manifest/types.js";
import { candidateRequest } from "../../src/runner/candidate.js";
import { resolvePython, runTests } from "../../src/runner/index.js";
import type { RunOutcome } from "../../src/runner/types.js";
import { EXAMPLE_TASKS, REPO_ROOT, makeTempDir } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { copyTask, type EditManifest } from "../helpers/task-copy.js";

export const RECORD_FIXTURES = join(REPO_ROOT, "test", "fixtures", "record");

/**
 * copyTask without the example's `record` section and alternatives/: these tests record
 * with drivers of their own (often over another upstream, with other targets), so the
 * example's driver or fixture generators must not run, the fixture-claims checks (which
 * apply to tasks with a record section) stay out of the way, and no alternative solution
 * of the example's targets is left to be checked against targets it was not written for.
 */
export async function copyTaskWithoutRecord(root: string, id: string, edit: EditManifest = () => {}): Promise<string> {
  const taskDir = await copyTask(root, id, async (m) => {
    delete m.record;
    await edit(m);
  });
  await rm(join(taskDir, "alternatives"), { recursive: true, force: true });
  return taskDir;
}

/**
 * copyTask, then task.json rewritten in the example's own layout (inline arrays,
 * one-line objects) so that a test can see the scaffold keep it.
 */
export async function copyTaskKeepingLayout(root: string, id: string, edit?: (text: string) => string): Promise<string> {
  const taskDir = await copyTask(root, id);
  // (the copy's layout is the example's: the text below is the example's own, with the upstream path fixed)
  const original = await readFile(join(EXAMPLE_TASKS, id, "task.json"), "utf8");
  const upstream = JSON.parse(original).upstream.path as string;
  const text = original.replace(JSON.stringify(upstream), JSON.stringify(JSON.parse(await readFile(join(taskDir, "task.json"), "utf8")).upstream.path));
  await writeFile(join(taskDir, "task.json"), edit ? edit(text) : text);
  return taskDir;
}

export interface Built {
  dir: string;
  workspace: string;
  grader: string;
  /** Reference target files, relative path → content. */
  reference: Record<string, string>;
  /** What the task's manifest gives its candidate (set-up, files, modules to warm). */
  candidate: ReturnType<typeof candidateRequest>;
}

/** `lmr build TASK --out TMP` with the CLI; the bundle's parts. */
export async function buildTask(taskDir: string, env: Record<string, string> = {}): Promise<Built> {
  const out = await makeTempDir("record-bundle");
  const r = await runCli(["build", taskDir, "--out", out, "--json"], { env });
  expect(r.exitCode, r.stderr).toBe(0);
  const dir = (jsonData(r.stdout) as { dir: string }[])[0]!.dir;
  const refDir = join(dir, "reference");
  const reference: Record<string, string> = {};
  for (const rel of await listFiles(refDir)) reference[rel] = await readFile(join(refDir, rel), "utf8");
  const manifest = JSON.parse(await readFile(join(taskDir, "task.json"), "utf8")) as TaskManifest;
  return { dir, workspace: join(dir, "workspace"), grader: join(dir, "grader"), reference, candidate: candidateRequest(manifest) };
}

/** Runs grader tests with the toolkit's runner (sandbox as available) on the stub, the reference or another overlay. */
export async function runReplay(built: Built, testPath: string, overlay: Record<string, string> | undefined, python?: string): Promise<RunOutcome> {
  const env = await resolvePython(python ? { python } : {});
  return runTests({
    tree: built.workspace,
    grader: built.grader,
    ...(overlay ? { overlay } : {}),
    testPaths: [testPath],
    ...built.candidate,
    python: env,
    timeoutTotalS: 120,
    timeoutPerTestS: 30,
  });
}

/** First interpreter among LMR_PYTHON/python3 and Debian's that can import every module named. */
export async function pythonWith(modules: string[]): Promise<string | undefined> {
  const candidates = [process.env.LMR_PYTHON || "python3", "/usr/bin/python3"];
  for (const py of [...new Set(candidates)]) {
    const r = await execa(py, ["-c", modules.map((m) => `import ${m}`).join("; ") || "pass"], { reject: false });
    if (r.exitCode === 0) return py;
  }
  return undefined;
}

export interface PyResult {
  name: string;
  status: "ok" | "skip" | "fail";
  detail: string;
}

/** Runs one of the fixture scripts that print a JSON list of results. */
export async function runPyChecks(python: string, script: string, args: string[]): Promise<PyResult[]> {
  const r = await execa(python, ["-B", join(RECORD_FIXTURES, script), ...args], { reject: false, env: { PYTHONDONTWRITEBYTECODE: "1" } });
  expect(r.exitCode, String(r.stderr)).toBe(0);
  return JSON.parse(String(r.stdout)) as PyResult[];
}
