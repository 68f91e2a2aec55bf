import { execa } from "execa";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { expect } from "vitest";
import type { BundleManifest } from "../../src/bundle/types.js";
import { nameModelFolder, type SampleResult } from "../../src/run-folder/index.js";
import { makeTempDir } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";

/** The Python examples: the eval tests build their submissions as Python patches and files. */
export const TASK_IDS = ["dpo-grad-region", "mcts-best-action", "pref-loss", "rouge-notebook", "trainer-class"];
/** `lmr eval` flags that keep a run over examples/tasks to the Python examples its submissions are for (`--set core`: as without --tasks, which would make it "all"). */
export const PY_EXAMPLES = ["--tasks", ...TASK_IDS, "--set", "core"];

/** `lmr build` of the example tasks into a temp folder: the masked workspaces and references submissions are made from. */
export async function buildExampleBundles(): Promise<string> {
  const out = await makeTempDir("eval-bundles");
  const r = await runCli(["build", "--tasks-dir", "examples/tasks", "--out", out]);
  expect(r.exitCode, r.stderr).toBe(0);
  return out;
}

export async function targetFiles(bundles: string, task: string): Promise<string[]> {
  const m = JSON.parse(await readFile(join(bundles, task, "bundle.json"), "utf8")) as BundleManifest;
  return [...new Set(m.targets.map((t) => t.file))].sort();
}

/** `diff -u` of two files, labelled a/REL and b/REL the way git and SWE-bench patches are. */
async function diffU(rel: string, before: string, after: string): Promise<string> {
  const r = await execa("diff", ["-u", "--label", `a/${rel}`, "--label", `b/${rel}`, before, after], { reject: false, stripFinalNewline: false });
  expect(r.exitCode, String(r.stderr)).toBeLessThanOrEqual(1);
  return String(r.stdout);
}

/** The patch that turns the masked workspace into the reference: a correct submission. */
export async function referencePatch(bundles: string, task: string): Promise<string> {
  const parts: string[] = [];
  for (const f of await targetFiles(bundles, task)) parts.push(await diffU(f, join(bundles, task, "workspace", f), join(bundles, task, "reference", f)));
  return parts.join("");
}

/** A patch that only appends a comment to the masked target: applies, and leaves the stub to fail. */
export async function stubPatch(bundles: string, task: string, scratch: string): Promise<string> {
  const f = (await targetFiles(bundles, task))[0]!;
  const masked = await readFile(join(bundles, task, "workspace", f), "utf8");
  const edited = join(scratch, `${task}-stub`, f);
  await mkdir(dirname(edited), { recursive: true });
  await writeFile(edited, `${masked}# tried, gave up\n`);
  return diffU(f, join(bundles, task, "workspace", f), edited);
}

/** The reference target files' contents: a correct files-JSONL submission. */
export async function referenceFiles(bundles: string, task: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of await targetFiles(bundles, task)) out[f] = await readFile(join(bundles, task, "reference", f), "utf8");
  return out;
}

export async function writeJsonl(file: string, rows: unknown[]): Promise<void> {
  await writeFile(file, rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n");
}

/**
 * Every result.json of a run folder: of one model keyed `task/sample`, or of
 * every model keyed `<model folder>/task/sample`.
 */
export async function readResults(runDir: string, model?: string): Promise<Map<string, SampleResult>> {
  const out = new Map<string, SampleResult>();
  const root = join(runDir, "results");
  const folders = model === undefined ? await readdir(root) : [nameModelFolder(model)];
  for (const folder of folders) {
    for (const task of await readdir(join(root, folder)).catch(() => [] as string[])) {
      for (const sample of await readdir(join(root, folder, task))) {
        const text = await readFile(join(root, folder, task, sample, "result.json"), "utf8").catch(() => undefined);
        if (text !== undefined) out.set(model === undefined ? `${folder}/${task}/${sample}` : `${task}/${sample}`, JSON.parse(text) as SampleResult);
      }
    }
  }
  return out;
}

/** How many result.json files a run folder holds, whatever their model. */
export async function countResultFiles(runDir: string): Promise<number> {
  return (await readResults(runDir)).size;
}

export function verdicts(results: Map<string, SampleResult>): Record<string, string> {
  return Object.fromEntries([...results].map(([k, r]) => [k, r.verdict]).sort());
}

/** `lmr eval` over the example tasks; extra flags appended. */
export function evalExamples(submissions: string, out: string, ...extra: string[]) {
  const only = extra.includes("--tasks") ? [] : PY_EXAMPLES;
  return runCli(["eval", "--tasks-dir", "examples/tasks", ...only, "--submissions", submissions, "--out", out, ...extra]);
}

/** Processes whose environment says they run in `scratchRoot` (the runner sets TMPDIR there; children inherit it). */
export async function processesUsing(scratchRoot: string): Promise<number[]> {
  const out: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const env = await readFile(`/proc/${name}/environ`, "latin1").catch(() => "");
    if (env.split("\0").some((kv) => kv.startsWith(`TMPDIR=${scratchRoot}/`))) out.push(Number(name));
  }
  return out;
}
