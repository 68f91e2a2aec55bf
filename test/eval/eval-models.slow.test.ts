import { cp, readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nameModelFolder } from "../../src/run-folder/index.js";
import { validateSummary, type Summary } from "../../src/report/index.js";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { copyTask } from "../helpers/task-copy.js";
import { checkXml } from "../report/xml-check.js";
import { TASK_IDS, buildExampleBundles, countResultFiles, evalExamples, readResults, referencePatch, stubPatch, verdicts, writeJsonl } from "./helpers.js";

afterAll(removeTempDirs);

let bundles: string;
let work: string;
const B = "Org/Model-B";
/** Model B's reference-passing tasks; the other three get the untouched stub. */
const B_PASSES = ["pref-loss", "rouge-notebook"];

beforeAll(async () => {
  bundles = await buildExampleBundles();
  work = await makeTempDir("eval-models");
});

/** Model A: reference then stub on every task (2 samples). Model B: one sample, reference on two tasks. Rows interleaved. */
async function twoModelRows(): Promise<unknown[]> {
  const rows: unknown[] = [];
  for (const t of TASK_IDS) {
    const ref = await referencePatch(bundles, t);
    const stub = await stubPatch(bundles, t, work);
    rows.push({ task_id: t, model: "model-a", patch: ref });
    rows.push({ instance_id: t, model_name_or_path: B, model_patch: B_PASSES.includes(t) ? ref : stub });
    rows.push({ task_id: t, model: "model-a", patch: stub });
  }
  return rows;
}

/** Every file under a folder with its size and content: to prove a refused run wrote nothing. */
async function snapshotTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const p = join(e.parentPath, e.name);
    out[p] = e.isFile() ? await readFile(p, "utf8") : "dir";
  }
  return out;
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

describe("lmr eval: one patch JSONL with two models", () => {
  let jsonl: string;
  let out: string;
  let summary: Summary;
  let stdout: string;

  beforeAll(async () => {
    jsonl = join(work, "two.jsonl");
    out = join(work, "run-two");
    await writeJsonl(jsonl, await twoModelRows());
    const r = await evalExamples(jsonl, out, "-j", "2");
    expect(r.exitCode, r.stderr).toBe(0);
    stdout = r.stdout;
    summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as Summary;
  });

  it("grades every row into its own (model, task, sample) folder", async () => {
    expect(await countResultFiles(out)).toBe(15);
    expect((await readdir(join(out, "results"))).sort()).toEqual([nameModelFolder(B), "model-a"].sort());
    const a = verdicts(await readResults(out, "model-a"));
    const b = verdicts(await readResults(out, B));
    for (const t of TASK_IDS) {
      expect([a[`${t}/0`], a[`${t}/1`]]).toEqual(["passed", "failed"]);
      expect(b[`${t}/0`]).toBe(B_PASSES.includes(t) ? "passed" : "failed");
    }
    expect(Object.keys(b)).toHaveLength(5);
    const one = JSON.parse(await readFile(join(out, "results", nameModelFolder(B), "pref-loss", "0", "result.json"), "utf8")) as { model: string; set: string };
    expect(one).toMatchObject({ model: B, set: "core" });
    const run = JSON.parse(await readFile(join(out, "run.json"), "utf8")) as { layout: number; set: string; models: unknown[] };
    expect(run).toMatchObject({
      layout: 2,
      set: "core",
      models: [
        { model: "model-a", dir: "model-a", samples: 2 },
        { model: B, dir: nameModelFolder(B), samples: 1 },
      ],
    });
  });

  it("computes pass@k per model, and warns about no missing sample", async () => {
    expect((await validateSummary(summary)).problems).toEqual([]);
    expect(summary.problems).toEqual([]);
    expect(summary.totals).toMatchObject({ models: 2, tasks: 5, samples: 15, passed: 7 });
    const a = summary.models.find((m) => m.model === "model-a")!;
    const b = summary.models.find((m) => m.model === B)!;
    // A: every task n=2, c=1 → pass@1 1/2, pass@2 1. B: n=1 per task, 2 of 5 pass → pass@1 2/5, no pass@2.
    expect(a.pass_at_k).toEqual([
      { k: 1, value: 0.5, tasks: 5 },
      { k: 2, value: 1, tasks: 5 },
    ]);
    expect(b.pass_at_k).toEqual([{ k: 1, value: 0.4, tasks: 5 }]);
    expect(a.tasks.every((t) => t.samples === 2)).toBe(true);
    expect(b.tasks.every((t) => t.samples === 1)).toBe(true);
    expect(stdout).toContain("15 samples over 5 tasks, 2 models: 7 passed, 8 failed");
    expect(stdout).toContain("  model-a: pass@1 50.0% over 5 tasks; 10 samples: 5 passed, 5 failed");
    expect(stdout).toContain(`  ${B}: pass@1 40.0% over 5 tasks; 5 samples: 2 passed, 3 failed`);
  });

  it("has a table per model in every report format", async () => {
    const md = await runCli(["report", out]);
    expect(md.exitCode, md.stderr).toBe(0);
    expect(md.stderr).toBe("");
    expect(md.stdout).toContain("| `model-a` | 5 of 5 | 10 (10 graded) | 5 | 50.0% | @1 50.0%, @2 100.0% | 5 passed, 5 failed |");
    expect(md.stdout).toContain(`| \`${B}\` | 5 of 5 | 5 (5 graded) | 2 | 40.0% |  | 2 passed, 3 failed |`);
    expect(md.stdout).toContain("## Model `model-a`");
    expect(md.stdout).toContain(`## Model \`${B}\``);
    expect(md.stdout.match(/^### Tasks$/gm)).toHaveLength(2);

    const html = await runCli(["report", out, "--format", "html"]);
    expect(html.stdout).toContain("<h2>Model <code>model-a</code></h2>");
    expect(html.stdout).toContain(`<h2>Model <code>${B}</code></h2>`);
    expect(html.stdout.match(/<h3>Tasks<\/h3>/g)).toHaveLength(2);

    const junit = await runCli(["report", out, "--format", "junit"]);
    expect(checkXml(junit.stdout)).toMatchObject({ ok: true, counts: { testsuite: 10, testcase: 15, failure: 8 } });
    expect(junit.stdout).toMatch(/<testsuite name="pref-loss \(model-a\)" tests="2" failures="1"/);
    expect(junit.stdout).toMatch(/<testsuite name="pref-loss \(Org\/Model-B\)" tests="1" failures="0"/);

    const json = jsonData((await runCli(["report", out, "--format", "json"])).stdout) as Summary;
    expect(json.models.map((m) => [m.model, m.pass_at_1, m.tasks.length])).toEqual([
      ["model-a", 0.5, 5],
      [B, 0.4, 5],
    ]);
  });

  it("resumes per model: a rerun reuses all; a model dropped from the file loses its results", async () => {
    const again = await evalExamples(jsonl, out, "-j", "2");
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain("(graded 0, reused 15)");
    const onlyA = join(work, "only-a.jsonl");
    await writeJsonl(
      onlyA,
      (await twoModelRows()).filter((r) => (r as { model?: string }).model === "model-a"),
    );
    const dropped = await evalExamples(onlyA, out, "-j", "2");
    expect(dropped.exitCode, dropped.stderr).toBe(0);
    expect(dropped.stdout).toContain("10 samples over 5 tasks: 5 passed, 5 failed");
    expect(dropped.stdout).toContain("(graded 0, reused 10)");
    expect(dropped.stderr.match(/removed the result of sample '0': the submissions no longer have it/g)).toHaveLength(5);
    expect(await readdir(join(out, "results"))).toEqual(["model-a"]);
  });
});

describe("lmr eval: bad input stops before anything is written", () => {
  it("exits 2 on a mistyped task id, naming the file, the line and the near match", async () => {
    const jsonl = join(work, "typo.jsonl");
    await writeJsonl(jsonl, [
      { task_id: "pref-loss", model: "m", patch: await referencePatch(bundles, "pref-loss") },
      { task_id: "pref-los", model: "m", patch: "x" },
    ]);
    const out = join(work, "run-typo");
    const r = await evalExamples(jsonl, out);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${jsonl}:2: /task_id: no task has the id 'pref-los'; did you mean 'pref-loss'?`);
    expect(r.stderr).toContain("nothing was graded or written");
    expect(await exists(out)).toBe(false);
  });

  it("exits 2 on a (task, model, sample) given twice, naming both lines, and leaves an existing run folder as it was", async () => {
    const out = join(work, "run-dup");
    const good = join(work, "good.jsonl");
    await writeJsonl(good, [{ task_id: "pref-loss", model: "m", patch: await referencePatch(bundles, "pref-loss") }]);
    const first = await evalExamples(good, out, "--tasks", "pref-loss");
    expect(first.exitCode, first.stderr).toBe(0);
    const before = await snapshotTree(out);

    const jsonl = join(work, "dup.jsonl");
    await writeJsonl(jsonl, [
      { task_id: "pref-loss", model: "m", sample: "a", patch: "p" },
      { task_id: "pref-loss", model: "other", sample: "a", patch: "p" },
      { task_id: "pref-loss", model: "m", sample: "a", patch: "q" },
      "not json",
    ]);
    const r = await evalExamples(jsonl, out, "--tasks", "pref-loss");
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("2 problems in the submissions");
    expect(r.stderr).toContain(`${jsonl}:3: /sample: task 'pref-loss', model 'm', sample 'a' is given twice: on line 1 and on line 3`);
    expect(r.stderr).toContain(`${jsonl}:4: not a JSON object`);
    expect(await snapshotTree(out)).toEqual(before);

    const fresh = join(work, "run-dup-fresh");
    expect((await evalExamples(jsonl, fresh)).exitCode).toBe(2);
    expect(await exists(fresh)).toBe(false);
  });

  it("refuses to grade into a run folder an older lmr wrote, and leaves it as it was", async () => {
    const out = join(work, "run-legacy");
    await cp(join(REPO_ROOT, "test", "fixtures", "runs", "legacy-v1"), out, { recursive: true });
    const before = await snapshotTree(out);
    const r = await evalExamples(join(work, "good.jsonl"), out, "--tasks", "pref-loss");
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${join(out, "run.json")}: /layout: this run folder holds results in layout 1`);
    expect(await snapshotTree(out)).toEqual(before);
  });

  it("exits 2 on --tasks with a mistyped id, suggesting the near one", async () => {
    const r = await evalExamples(join(work, "good.jsonl"), join(work, "run-x"), "--tasks", "rouge-notebok");
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/no task with id 'rouge-notebok' \(did you mean 'rouge-notebook'\?\)/);
  });
});

describe("lmr eval --set", () => {
  it("grades the core set by default, the extended set on request, and lists rows it leaves out", async () => {
    const root = await makeTempDir("eval-sets");
    await copyTask(root, "pref-loss");
    await copyTask(root, "rouge-notebook", (m) => {
      m.set = "extended";
    });
    const jsonl = join(work, "sets.jsonl");
    await writeJsonl(jsonl, [
      { task_id: "pref-loss", model: "m", patch: await referencePatch(bundles, "pref-loss") },
      { task_id: "rouge-notebook", model: "m", patch: await referencePatch(bundles, "rouge-notebook") },
    ]);
    const tasksDir = join(root, "tasks");
    const evalSet = (out: string, ...extra: string[]) =>
      runCli(["eval", "--tasks-dir", tasksDir, "--submissions", jsonl, "--out", join(root, out), "-j", "2", ...extra]);

    const core = await evalSet("core");
    expect(core.exitCode, core.stderr).toBe(0);
    expect(core.stderr).toMatch(/1 row\(s\) for 1 task\(s\) outside this run's selection are not graded: rouge-notebook/);
    expect([...(await readResults(join(root, "core"), "m")).keys()]).toEqual(["pref-loss/0"]);

    const ext = await evalSet("ext", "--set", "extended");
    expect(ext.exitCode, ext.stderr).toBe(0);
    const extResults = await readResults(join(root, "ext"), "m");
    expect([...extResults.keys()]).toEqual(["rouge-notebook/0"]);
    expect(extResults.get("rouge-notebook/0")).toMatchObject({ set: "extended", verdict: "passed" });

    const all = await evalSet("all", "--set", "all");
    expect(all.exitCode, all.stderr).toBe(0);
    const report = await runCli(["report", join(root, "all")]);
    expect(report.stdout).toMatch(/\| `rouge-notebook` \| extended \|/);
    expect(report.stdout).toContain("### Sets");
    const onlyExt = jsonData((await runCli(["report", join(root, "all"), "--set", "extended", "--json"])).stdout) as Summary;
    expect(onlyExt.models[0]!.tasks.map((t) => t.task_id)).toEqual(["rouge-notebook"]);

    const clash = await evalSet("clash", "--tasks", "rouge-notebook", "--set", "core");
    expect(clash.exitCode).toBe(2);
    expect(clash.stderr).toMatch(/'rouge-notebook' \(extended\) not in set core/);
    const list = await runCli(["list", "--tasks-dir", tasksDir, "--set", "extended"]);
    expect(list.stdout).toMatch(/^rouge-notebook\s+extended\s/);
    expect(list.stdout).not.toContain("pref-loss");
  });
});
