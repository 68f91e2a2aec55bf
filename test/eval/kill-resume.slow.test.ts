import { spawn } from "node:child_process";
import { readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateSummary, type Summary } from "../../src/report/index.js";
import { probeBwrap } from "../../src/runner/index.js";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { CLI, jsonData } from "../helpers/run-cli.js";
import {
  PY_EXAMPLES,
  TASK_IDS,
  buildExampleBundles,
  countResultFiles,
  evalExamples,
  processesUsing,
  readResults,
  referenceFiles,
  referencePatch,
  stubPatch,
  verdicts,
  writeJsonl,
} from "./helpers.js";

/**
 * kill -9 of a running `lmr eval` (the whole process group) while samples are
 * in flight, then the same command again: it must finish with exactly one
 * result per (task, model, sample), the verdicts of a clean run, and no test process
 * or scratch copy of the killed run left.
 */
afterAll(removeTempDirs);

const bwrap = await probeBwrap();
const SAMPLES = 3;
let bundles: string;
let work: string;

beforeAll(async () => {
  bundles = await buildExampleBundles();
  work = await makeTempDir("kill");
});

/**
 * Three samples per task (reference, stub, reference). The first sample of the
 * first task is the reference made slow at import, so it is still running when
 * the kill comes: for `none` it sleeps 60 s while `marker` exists, which is only
 * during the run that gets killed (its copy survives the kill: the rerun must
 * reap it); under bwrap /tmp is private, so it sleeps 3 s every time.
 */
async function submissions(slow: string): Promise<unknown[]> {
  const rows: unknown[] = [];
  for (const t of TASK_IDS) {
    const ref = await referencePatch(bundles, t);
    if (rows.length === 0) {
      const files = await referenceFiles(bundles, t);
      const [f] = Object.keys(files);
      rows.push({ task_id: t, model: "m", files: { [f!]: `${slow}\n${files[f!]}` } });
    } else rows.push({ task_id: t, model: "m", patch: ref });
    rows.push({ task_id: t, model: "m", patch: await stubPatch(bundles, t, work) });
    rows.push({ task_id: t, model: "m", patch: ref });
  }
  return rows;
}

async function countResults(runDir: string): Promise<number> {
  return countResultFiles(runDir).catch(() => 0);
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

const variants = [
  // bwrap by name: auto would take docker where the examples' image is built (test/runner/docker-eval.docker.ts covers that)
  { sandbox: "bwrap", skip: !bwrap.ok },
  { sandbox: "none", skip: false },
] as const;

describe.each(variants)("kill -9 during lmr eval --sandbox $sandbox, then the same command", ({ sandbox, skip }) => {
  it.skipIf(skip)(
    "resumes to the clean run's verdicts, one result per sample, nothing left over",
    async () => {
      const total = TASK_IDS.length * SAMPLES;
      const marker = join(work, `go-${sandbox}`);
      const slow =
        sandbox === "none"
          ? `import os as _o, time as _t\nif _o.path.exists(${JSON.stringify(marker)}):\n    _t.sleep(60)\n`
          : "import time as _t\n_t.sleep(3)\n";
      await writeFile(marker, "");
      const jsonl = join(work, `subs-${sandbox}.jsonl`);
      await writeJsonl(jsonl, await submissions(slow));
      const runDir = join(work, `run-${sandbox}`);
      const scratch = join(runDir, ".scratch");
      const args = ["eval", "--tasks-dir", "examples/tasks", ...PY_EXAMPLES, "--submissions", jsonl, "--out", runDir, "-j", "2", "--sandbox", sandbox];

      const child = spawn("node", [CLI, ...args], { cwd: REPO_ROOT, detached: true, stdio: "ignore", env: { ...process.env, NO_COLOR: "1" } });
      const exited = new Promise<void>((r) => child.on("exit", () => r()));
      const atKill = await waitFor(
        "some results",
        async () => {
          const n = await countResults(runDir);
          return n >= 3 ? n : undefined;
        },
        60_000,
      );
      process.kill(-child.pid!, "SIGKILL");
      await exited;
      expect(atKill).toBeLessThan(total);
      expect((await readdir(scratch)).some((n) => n.startsWith("lmr-run-"))).toBe(true);

      if (sandbox === "none") {
        // The local backend's test processes are their own process group: they outlive the kill.
        expect((await processesUsing(scratch)).length).toBeGreaterThan(0);
      } else {
        // bwrap runs with --die-with-parent: its sandbox goes with the evaluator.
        await waitFor("the sandboxed processes to die", async () => ((await processesUsing(scratch)).length === 0 ? true : undefined), 5_000);
      }
      await rm(marker);

      const rerun = await evalExamples(jsonl, runDir, "-j", "2", "--sandbox", sandbox, "--json");
      expect(rerun.exitCode, rerun.stderr).toBe(0);
      const killed = /killed (\d+) leftover test process/.exec(rerun.stderr);
      expect(killed, rerun.stderr).not.toBeNull();
      if (sandbox === "none") expect(Number(killed![1])).toBeGreaterThan(0);
      const summary = jsonData(rerun.stdout) as Summary;
      expect((await validateSummary(summary)).problems).toEqual([]);
      expect(summary.totals).toMatchObject({ models: 1, tasks: TASK_IDS.length, samples: total, graded: total });
      expect(await readdir(join(runDir, "results"))).toEqual(["m"]);
      expect(summary.problems).toEqual([]);

      for (const t of TASK_IDS) {
        const samples = (await readdir(join(runDir, "results", "m", t))).sort();
        expect(samples).toEqual(["0", "1", "2"]);
        for (const s of samples)
          expect((await readdir(join(runDir, "results", "m", t, s))).sort()).toEqual(["junit.xml", "log.txt", "result.json", "submission.diff"]);
      }
      const resumed = verdicts(await readResults(runDir));
      const clean = await evalExamples(jsonl, join(work, `clean-${sandbox}`), "-j", "2", "--sandbox", sandbox);
      expect(clean.exitCode, clean.stderr).toBe(0);
      expect(resumed).toEqual(verdicts(await readResults(join(work, `clean-${sandbox}`))));
      expect(Object.values(resumed).filter((v) => v === "passed")).toHaveLength(2 * TASK_IDS.length);

      expect(await readdir(runDir)).not.toContain(".scratch");
      expect(await readdir(runDir)).not.toContain(".lock");
      expect(await processesUsing(scratch)).toEqual([]);
      const summaryOnDisk = JSON.parse(await readFile(join(runDir, "summary.json"), "utf8")) as Summary;
      expect(summaryOnDisk.totals.samples).toBe(total);
    },
    120_000,
  );
});
