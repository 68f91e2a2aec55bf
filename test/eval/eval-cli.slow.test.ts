import { cp, mkdir, readFile, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateSummary, type Summary } from "../../src/report/index.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { jsonData } from "../helpers/run-cli.js";
import {
  TASK_IDS,
  buildExampleBundles,
  evalExamples,
  readResults,
  referenceFiles,
  referencePatch,
  stubPatch,
  targetFiles,
  verdicts,
  writeJsonl,
} from "./helpers.js";

afterAll(removeTempDirs);

let bundles: string;
let work: string;

beforeAll(async () => {
  bundles = await buildExampleBundles();
  work = await makeTempDir("eval");
});

/** Three samples per task: the reference (SWE-bench keys), the untouched stub, the reference again. */
async function threeSampleRows(): Promise<unknown[]> {
  const rows: unknown[] = [];
  for (const t of TASK_IDS) {
    const ref = await referencePatch(bundles, t);
    rows.push({ instance_id: t, model_name_or_path: "model-a", model_patch: ref });
    rows.push({ task_id: t, model: "model-a", patch: await stubPatch(bundles, t, work) });
    rows.push({ task_id: t, model: "model-a", patch: ref });
  }
  return rows;
}

describe("lmr eval: patch JSONL with several samples per task", () => {
  let jsonl: string;
  let out: string;
  let summary: Summary;

  beforeAll(async () => {
    jsonl = join(work, "three.jsonl");
    out = join(work, "run-three");
    await writeJsonl(jsonl, await threeSampleRows());
    const r = await evalExamples(jsonl, out, "-j", "2", "--json");
    expect(r.exitCode, r.stderr).toBe(0);
    summary = jsonData(r.stdout) as Summary;
  });

  it("grades every sample (SWE-bench key names too) and prints a summary that validates", async () => {
    expect((await validateSummary(summary)).problems).toEqual([]);
    expect(summary.totals).toMatchObject({ models: 1, tasks: 5, samples: 15, graded: 15, passed: 10 });
    const v = verdicts(await readResults(out, "model-a"));
    for (const t of TASK_IDS) expect([v[`${t}/0`], v[`${t}/1`], v[`${t}/2`]]).toEqual(["passed", "failed", "passed"]);
    expect(summary.models.map((m) => [m.model, m.samples_per_task])).toEqual([["model-a", 3]]);
    expect(summary.problems).toEqual([]);
    expect(summary.run.samples_per_task).toBe(3);
  });

  it("reports unbiased pass@k per task and over tasks", () => {
    const m = summary.models[0]!;
    for (const t of m.tasks) {
      expect(t.pass_at_k.map((p) => p.k)).toEqual([1, 2, 3]);
      expect(t.pass_at_k[0]!.value).toBeCloseTo(2 / 3, 12);
      expect(t.pass_at_k[1]!.value).toBe(1);
    }
    expect(m.pass_at_k.map((p) => [p.k, Number(p.value.toFixed(6)), p.tasks])).toEqual([
      [1, 0.666667, 5],
      [2, 1, 5],
      [3, 1, 5],
    ]);
  });

  it("--samples K keeps the first K samples; rerunning into the same folder removes the rest and reuses the others", async () => {
    const r = await evalExamples(jsonl, out, "-j", "2", "--samples", "2");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("10 samples over 5 tasks: 5 passed, 5 failed");
    expect(r.stdout).toContain("(graded 0, reused 10)");
    expect(r.stderr).toMatch(/removed the result of sample '2': the submissions no longer have it/);
    expect(r.stderr).toContain(join(out, "results", "model-a", "pref-loss", "2"));
    const s = JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as Summary;
    expect(s.models[0]!.pass_at_k.map((p) => p.k)).toEqual([1, 2]);
    expect(s.problems).toEqual([]);
    expect([...(await readResults(out, "model-a")).keys()].filter((k) => k.endsWith("/2"))).toEqual([]);
  });
});

describe("lmr eval: files JSONL and what a submission may not do", () => {
  it("grades target files, ignores (and logs) others, refuses grader files and conftest.py", async () => {
    const ref = (t: string) => referenceFiles(bundles, t);
    // A context line the masked file does not have: the patch cannot apply.
    const mctsLines = (await referencePatch(bundles, "mcts-best-action")).split("\n");
    const ctx = mctsLines.findIndex((l, i) => i > 2 && l.startsWith(" ") && l.trim() !== "");
    mctsLines[ctx] += "  # not what the file says";
    const mctsPatch = mctsLines.join("\n");
    const jsonl = join(work, "files.jsonl");
    await writeJsonl(jsonl, [
      { task_id: "pref-loss", model: "m", files: { ...(await ref("pref-loss")), "notes.md": "scratch", "utils.py": "raise SystemExit(1)\n" } },
      { task_id: "rouge-notebook", model: "m", files: { ...(await ref("rouge-notebook")), "lmr_tests/tests/test_rouge_l.py": "def test_ok():\n    pass\n" } },
      { task_id: "trainer-class", model: "m", files: { ...(await ref("trainer-class")), "conftest.py": "import pytest\n" } },
      { task_id: "mcts-best-action", model: "m", patch: mctsPatch },
    ]);
    const out = join(work, "run-files");
    const r = await evalExamples(jsonl, out, "-j", "2");
    expect(r.exitCode, r.stderr).toBe(0);
    const res = await readResults(out, "m");
    expect(verdicts(res)).toEqual({
      "dpo-grad-region/0": "invalid",
      "mcts-best-action/0": "invalid",
      "pref-loss/0": "passed",
      "rouge-notebook/0": "invalid",
      "trainer-class/0": "invalid",
    });
    expect(res.get("dpo-grad-region/0")!.reason).toBe("no submission from model 'm' for this task");
    expect(res.get("mcts-best-action/0")!.reason).toBe("the patch does not apply to core/mcts.py");
    expect(res.get("rouge-notebook/0")!.reason).toMatch(/touches 'lmr_tests\/tests\/test_rouge_l.py', which only the grader may provide/);
    expect(res.get("trainer-class/0")!.reason).toMatch(/touches 'conftest.py'/);
    const log = await readFile(join(out, "results", "m", "pref-loss", "0", "log.txt"), "utf8");
    expect(log).toMatch(/^lmr: ignored non-target files from the submission: notes.md, utils.py$/m);
    expect(await readdir(join(out, "results"))).toEqual(["m"]);
    expect(await readdir(join(out, "results", "m", "pref-loss"))).toEqual(["0"]);
  });
});

describe("lmr eval: a folder of workspaces", () => {
  it("reads DIR/<task>/ and DIR/<task>/<sample>/, takes model.txt, refuses a symlinked target with exit 2", async () => {
    const dir = join(work, "workspaces");
    const copyWorkspace = async (task: string, to: string, withReference: boolean) => {
      await cp(join(bundles, task, "workspace"), to, { recursive: true });
      if (withReference) await cp(join(bundles, task, "reference"), to, { recursive: true });
    };
    await copyWorkspace("pref-loss", join(dir, "pref-loss"), true);
    await copyWorkspace("rouge-notebook", join(dir, "rouge-notebook", "0"), true);
    await copyWorkspace("rouge-notebook", join(dir, "rouge-notebook", "1"), false);
    await copyWorkspace("mcts-best-action", join(dir, "mcts-best-action"), false);
    const target = (await targetFiles(bundles, "mcts-best-action"))[0]!;
    await rm(join(dir, "mcts-best-action", target));
    await symlink(join(bundles, "mcts-best-action", "reference", target), join(dir, "mcts-best-action", target));
    await writeFile(join(dir, "model.txt"), "folder-model\n");
    const out = join(work, "run-folder");
    // a target reached through a link (here, to the reference) is bad input: nothing is graded
    const linked = await evalExamples(dir, out, "--tasks", "pref-loss", "rouge-notebook", "mcts-best-action", "-j", "2", "--json");
    expect(linked.exitCode).toBe(2);
    expect(linked.stdout + linked.stderr).toContain(`${target} is reached through the symbolic link '${target}'`);
    expect(
      await stat(join(out, "results")).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
    await rm(join(dir, "mcts-best-action", target));
    await cp(join(bundles, "mcts-best-action", "workspace", target), join(dir, "mcts-best-action", target));
    const r = await evalExamples(dir, out, "--tasks", "pref-loss", "rouge-notebook", "mcts-best-action", "-j", "2", "--json");
    expect(r.exitCode, r.stderr).toBe(0);
    const res = await readResults(out, "folder-model");
    expect(verdicts(res)).toEqual({
      "mcts-best-action/0": "failed",
      "pref-loss/0": "passed",
      "rouge-notebook/0": "passed",
      "rouge-notebook/1": "failed",
    });
    expect(res.get("pref-loss/0")!.model).toBe("folder-model");
    expect((await validateSummary(jsonData(r.stdout))).ok).toBe(true);
  });
});

describe("lmr eval: resuming", () => {
  it("reuses every sample on a rerun and re-grades only a changed submission", async () => {
    const rows = [];
    for (const t of TASK_IDS) rows.push({ task_id: t, model: "m", patch: await referencePatch(bundles, t) });
    const jsonl = join(work, "resume.jsonl");
    const out = join(work, "run-resume");
    await writeJsonl(jsonl, rows);
    const first = await evalExamples(jsonl, out, "-j", "2");
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain("5 samples over 5 tasks: 5 passed");
    expect(first.stdout).toContain("(graded 5, reused 0)");
    const snapshot = async () =>
      Object.fromEntries(await Promise.all(TASK_IDS.map(async (t) => [t, await readFile(join(out, "results", "m", t, "0", "result.json"), "utf8")] as const)));
    const before = await snapshot();

    const again = await evalExamples(jsonl, out, "-j", "2");
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain("5 samples over 5 tasks: 5 passed");
    expect(again.stdout).toContain("(graded 0, reused 5)");
    expect(await snapshot()).toEqual(before);

    rows[2] = { task_id: "pref-loss", model: "m", patch: await stubPatch(bundles, "pref-loss", work) };
    await writeJsonl(jsonl, rows);
    const changed = await evalExamples(jsonl, out, "-j", "2");
    expect(changed.exitCode, changed.stderr).toBe(0);
    expect(changed.stdout).toContain("5 samples over 5 tasks: 4 passed, 1 failed");
    expect(changed.stdout).toContain("(graded 1, reused 4)");
    const after = await snapshot();
    for (const t of TASK_IDS.filter((t) => t !== "pref-loss")) expect(after[t]).toBe(before[t]);
    expect(JSON.parse(after["pref-loss"]!).verdict).toBe("failed");
  });

  it("refuses a run folder that a live lmr eval holds, and takes over one whose holder is gone", async () => {
    const out = join(work, "run-locked");
    await mkdir(out, { recursive: true });
    const stat = await readFile("/proc/self/stat", "utf8");
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    await writeFile(join(out, ".lock"), JSON.stringify({ pid: process.pid, start, started_at: "now" }));
    const jsonl = join(work, "one.jsonl");
    await writeJsonl(jsonl, [{ task_id: "pref-loss", model: "m", patch: await referencePatch(bundles, "pref-loss") }]);
    const busy = await evalExamples(jsonl, out, "--tasks", "pref-loss");
    expect(busy.exitCode).toBe(2);
    expect(busy.stderr).toMatch(new RegExp(`another lmr eval \\(pid ${process.pid}, started now\\) is grading into this run folder`));

    // Same pid, another start time: the pid was reused by a process that is not the old run.
    await writeFile(join(out, ".lock"), JSON.stringify({ pid: process.pid, start: "1", started_at: "earlier" }));
    await mkdir(join(out, ".scratch", "lmr-run-left"), { recursive: true });
    const taken = await evalExamples(jsonl, out, "--tasks", "pref-loss");
    expect(taken.exitCode, taken.stderr).toBe(0);
    expect(taken.stderr).toMatch(/resumed after an interrupted run \(pid \d+\): killed 0 leftover test process\(es\), removed 1 scratch\/temp entry/);
    expect(await readdir(out)).not.toContain(".lock");
    expect(await readdir(out)).not.toContain(".scratch");
  });
});
