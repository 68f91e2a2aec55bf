import { readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GenerateSummary } from "../../src/generate/run-generate.js";
import { PythonMasker } from "../../src/mask/python/masker.js";
import type { Summary } from "../../src/report/types.js";
import { makeTempDir, removeTempDirs, UPSTREAMS } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { copyTask } from "../helpers/task-copy.js";
import { readResults } from "../eval/helpers.js";
import { startScriptedServer, type ScriptedServer } from "./scripted-server.js";

// The two instruction levels end to end: a scripted model that solves pref-loss only when its prompt
// carries the hinted instruction, generated and graded at both levels, reported side by side.
const KEY_ENV = { LMR_TEST_API_KEY: "sk-test-levels" };
const MODEL = "scripted/levels";
const TASK = "pref-loss";

let work: string;
let server: ScriptedServer;
let hints: string;
let paper: string;

/** The reference preference_loss, cut out of the fixture upstream, as a fenced reply. */
async function referenceReply(): Promise<string> {
  const source = await readFile(join(UPSTREAMS, "pref-trainer", "trainers.py"), "utf8");
  const sym = (await new PythonMasker().listSymbols(source)).find((s) => s.name === "preference_loss")!;
  return "```python\n" + Buffer.from(source).subarray(sym.bytes!.start, sym.bytes!.end).toString("utf8") + "\n```\n";
}

/** A line of `text` that `other` lacks: what tells the two instructions apart in a prompt. */
function distinctLine(text: string, other: string): string {
  const line = text
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.length > 30 && !other.includes(l));
  if (line === undefined) throw new Error("the two levels share every line");
  return line;
}

const generate = (out: string, ...extra: string[]) =>
  runCli(
    [
      "generate",
      "--tasks-dir",
      "examples/tasks",
      "--tasks",
      TASK,
      "--base-url",
      server.baseUrl,
      "--model",
      MODEL,
      "--api-key-env",
      "LMR_TEST_API_KEY",
      "--out",
      out,
      "-n",
      "2",
      ...extra,
    ],
    { env: KEY_ENV },
  );
const evaluate = (submissions: string, out: string, ...extra: string[]) =>
  runCli(["eval", "--tasks-dir", "examples/tasks", "--tasks", TASK, "--submissions", submissions, "--out", out, "--sandbox", "none", "-j", "2", ...extra]);

beforeAll(async () => {
  work = await makeTempDir("levels");
  hints = await readFile(join("examples/tasks", TASK, "hints.md"), "utf8");
  paper = await readFile(join("examples/tasks", TASK, "instruction.md"), "utf8");
  const hinted = distinctLine(hints, paper);
  const solved = await referenceReply();
  server = await startScriptedServer((req) => {
    const prompt = (req.body.messages ?? []).map((m) => m.content).join("\n");
    return { kind: "reply", text: prompt.includes(hinted) ? solved : "I cannot tell the loss from this description." };
  });
});
afterAll(async () => {
  await server?.close();
  await removeTempDirs();
});

describe("--level paper|hinted through generate, eval and report", () => {
  const gen = { paper: "", hinted: "" };
  const run = { paper: "", hinted: "" };

  beforeAll(async () => {
    for (const level of ["paper", "hinted"] as const) {
      gen[level] = join(work, `gen-${level}`);
      const g = await generate(gen[level], "--level", level);
      expect(g.exitCode, g.stderr).toBe(0);
      run[level] = join(work, `run-${level}`);
      // no --level: eval takes it from the generate.json beside the submissions
      const e = await evaluate(join(gen[level], "submissions.jsonl"), run[level]);
      expect(e.exitCode, e.stderr).toBe(0);
    }
  });

  it("the prompt carries the level's instruction, and generate.json and the bundle record it", async () => {
    for (const level of ["paper", "hinted"] as const) {
      const summary = JSON.parse(await readFile(join(gen[level], "generate.json"), "utf8")) as GenerateSummary;
      expect(summary.level).toBe(level);
      const bundle = JSON.parse(await readFile(join(gen[level], "bundles", TASK, "bundle.json"), "utf8")) as { level: string; hashes: { workspace: string } };
      expect(bundle.level).toBe(level);
      expect(await readFile(join(gen[level], "bundles", TASK, "workspace", "instruction.md"), "utf8")).toBe(level === "paper" ? paper : hints);
    }
    // the workspace hash is the paper level's at both levels: a submission grades alike at either
    const hash = async (level: string) =>
      (JSON.parse(await readFile(join(work, `gen-${level}`, "bundles", TASK, "bundle.json"), "utf8")) as { hashes: { workspace: string } }).hashes.workspace;
    expect(await hash("hinted")).toBe(await hash("paper"));
  });

  it("run.json, every result.json and summary.json record the level; the scripted model solves only the hinted level", async () => {
    for (const level of ["paper", "hinted"] as const) {
      expect(JSON.parse(await readFile(join(run[level], "run.json"), "utf8")).level).toBe(level);
      const results = await readResults(run[level], MODEL);
      expect([...results.values()].map((r) => r.level)).toEqual([level, level]);
      expect([...results.values()].map((r) => r.verdict)).toEqual(level === "hinted" ? ["passed", "passed"] : ["invalid", "invalid"]);
      const summary = JSON.parse(await readFile(join(run[level], "summary.json"), "utf8")) as Summary;
      expect(summary.run.level).toBe(level);
      // one level: it is the run's, and the model keeps its plain name
      expect(summary.models.map((m) => [m.model, m.level])).toEqual([[MODEL, undefined]]);
    }
  });

  it("lmr report over both runs shows the levels side by side and never pools them", async () => {
    const md = await runCli(["report", run.paper, run.hinted, "--format", "md"]);
    expect(md.exitCode, md.stderr).toBe(0);
    expect(md.stdout).toContain(`| \`${MODEL} [paper]\` |`);
    expect(md.stdout).toContain(`| \`${MODEL} [hinted]\` |`);
    expect(md.stdout).toContain("## Instruction levels side by side");
    expect(md.stdout).toMatch(new RegExp(`\\| \`${MODEL}\` \\| 0\\.0% \\(1 of 1 tasks\\) \\| 100\\.0% \\(1 of 1 tasks\\) \\|`));
    const json = await runCli(["report", run.paper, run.hinted, "--format", "json"]);
    expect(json.exitCode, json.stderr).toBe(0);
    const s = jsonData(json.stdout) as Summary;
    expect(s.models.map((m) => [m.level, m.totals.samples, m.pass_at_1])).toEqual([
      ["paper", 2, 0],
      ["hinted", 2, 1],
    ]);
    expect(s.run.level).toBeUndefined();
    expect(s.problems).toEqual([]);
    const html = await runCli(["report", run.paper, run.hinted, "--format", "html"]);
    expect(html.stdout).toContain("Instruction levels side by side");
  });

  it("a --level that contradicts generate.json, or a run folder of the other level: exit 2, the fix named, nothing graded", async () => {
    const contra = await evaluate(join(gen.paper, "submissions.jsonl"), join(work, "run-contra"), "--level", "hinted");
    expect(contra.exitCode).toBe(2);
    expect(contra.stderr).toMatch(/generated at level 'paper'.*--level says 'hinted'/s);
    expect(
      await stat(join(work, "run-contra")).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
    const before = await readdir(join(run.paper, "results"), { recursive: true });
    const mixed = await evaluate(join(gen.hinted, "submissions.jsonl"), run.paper);
    expect(mixed.exitCode).toBe(2);
    expect(mixed.stderr).toMatch(/graded at level 'paper'.*another --out/s);
    expect(await readdir(join(run.paper, "results"), { recursive: true })).toEqual(before);
  });

  it('a task without hints.md at --level hinted: exit 2 naming task.json\'s "hints"', async () => {
    const noHints = await makeTempDir("levels-nohints");
    const taskDir = await copyTask(noHints, TASK, (m) => {
      delete m.hints;
    });
    const out = join(work, "build-nohints");
    const r = await runCli(["build", taskDir, "--out", out, "--level", "hinted"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/no hinted instruction/);
    expect(r.stderr).toMatch(/hints/);
    expect(
      await stat(out).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
  });
});

describe("lmr report holds each task to its own sample count", () => {
  it("two samples of one task and one of another is no coverage problem (it was '1 of 2 samples')", async () => {
    const bundles = join(work, "gen-paper", "bundles");
    const masked = await readFile(join(bundles, TASK, "workspace", "trainers.py"), "utf8");
    const rows = [
      { task_id: TASK, model: "m", files: { "trainers.py": masked } },
      { task_id: TASK, model: "m", files: { "trainers.py": masked } },
      { task_id: "rouge-notebook", model: "m", patch: "" },
    ];
    const subs = join(work, "uneven.jsonl");
    await writeFile(subs, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const out = join(work, "run-uneven");
    const r = await runCli([
      "eval",
      "--tasks-dir",
      "examples/tasks",
      "--tasks",
      TASK,
      "rouge-notebook",
      "--submissions",
      subs,
      "--out",
      out,
      "--sandbox",
      "none",
      "--json",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = jsonData(r.stdout) as Summary;
    expect(s.models[0]!.tasks.map((t) => [t.task_id, t.samples])).toEqual([
      [TASK, 2],
      ["rouge-notebook", 1],
    ]);
    expect(s.problems).toEqual([]);
    // a sample that goes missing is still a problem, against that task's own count
    await rm(join(out, "results", "m", TASK, "1"), { recursive: true });
    const again = await runCli(["report", out, "--format", "json"]);
    const s2 = jsonData(again.stdout) as Summary;
    expect(s2.problems.map((p) => p.message)).toEqual(["1 of 2 samples of model 'm' have a readable result.json"]);
  });
});
