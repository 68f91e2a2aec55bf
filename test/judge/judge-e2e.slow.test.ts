import { cp, mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GenerateSummary } from "../../src/generate/run-generate.js";
import type { JudgeSummary } from "../../src/judge/run-judge.js";
import { PythonMasker } from "../../src/mask/python/masker.js";
import { nameModelFolder, type SampleJudgement } from "../../src/run-folder/index.js";
import type { Summary } from "../../src/report/types.js";
import { sampleAnchor } from "../../src/report/render-html-compare.js";
import { makeTempDir, removeTempDirs, REPO_ROOT } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { readResults, verdicts } from "../eval/helpers.js";
import { startScriptedServer, taskOf, type ScriptedAction, type ScriptedServer, type SeenRequest } from "../generate/scripted-server.js";

const KEY = "sk-judge-test-5e1a9c";
const ENV = { LMR_TEST_API_KEY: KEY };
const TASKS = ["pref-loss", "mcts-best-action"];
const BY_TARGET = { preference_loss: "pref-loss", "OpenLoopMCTS.find_best_action": "mcts-best-action" };
/** Where test artifacts (the screenshot) go: kept after the run, unlike the temp folders. */
const ARTIFACTS = join(REPO_ROOT, "test-artifacts");

let work: string;
let bundles: string;
let prefGood: string;
let prefBuggy: string;
let mctsGood: string;

async function definitionIn(file: string, symbol: string): Promise<string> {
  const source = await readFile(file, "utf8");
  const sym = (await new PythonMasker().listSymbols(source)).find((s) => s.name === symbol)!;
  return Buffer.from(source).subarray(sym.bytes!.start, sym.bytes!.end).toString("utf8");
}

const fence = (code: string, prose = "Here it is."): string => `${prose}\n\n\`\`\`python\n${code}\n\`\`\`\n`;
const isJudge = (req: SeenRequest): boolean => req.body.response_format !== undefined || (req.body.messages?.[0]?.content ?? "").startsWith("You review code");
const submissionOf = (req: SeenRequest): string =>
  /# Submission\n([\s\S]*?)\n# /.exec(req.body.messages?.find((m) => m.role === "user")?.content ?? "")?.[1] ?? "";
const verdict = (cls: string, why: string): ScriptedAction => ({ kind: "reply", text: JSON.stringify({ class: cls, rationale: why }) });

beforeAll(async () => {
  work = await makeTempDir("judge-e2e");
  bundles = join(work, "bundles");
  const built = await runCli(["build", ...TASKS.map((t) => `examples/tasks/${t}`), "--out", bundles]);
  expect(built.exitCode, built.stderr).toBe(0);
  const pref = await definitionIn(join(bundles, "pref-loss", "reference", "trainers.py"), "preference_loss");
  prefGood = pref;
  // a sign slip in the chosen reward: right logic, an implementation error the tests catch
  prefBuggy = pref.replace(
    "chosen_rewards.append(beta * (policy_chosen_logps[i] - reference_chosen_logps[i]))",
    "chosen_rewards.append(beta * (reference_chosen_logps[i] - policy_chosen_logps[i]))",
  );
  expect(prefBuggy).not.toBe(prefGood);
  const mctsFile = (await readdir(join(bundles, "mcts-best-action", "reference"), { recursive: true })).find((f) => f.endsWith("mcts.py"))!;
  const method = await definitionIn(join(bundles, "mcts-best-action", "reference", mctsFile), "OpenLoopMCTS.find_best_action");
  const [first, ...rest] = method.split("\n");
  mctsGood = [first, ...rest.map((l) => l.replace(/^ {4}/, ""))].join("\n");
});
afterAll(removeTempDirs);

async function seed(out: string): Promise<void> {
  await mkdir(out, { recursive: true });
  await cp(bundles, join(out, "bundles"), { recursive: true });
}

describe("lmr generate -n 3 → lmr eval → lmr judge → lmr report, two models against one scripted server", () => {
  let server: ScriptedServer;
  /** Model a's pref-loss prompt meets these first, one each; then good replies. */
  const genFailures: ScriptedAction[] = [
    { kind: "status", status: 429, headers: { "retry-after": "1" } },
    { kind: "status", status: 500 },
    { kind: "hang" },
    { kind: "malformed" },
  ];
  /** The judge's first requests (other than mcts's) meet these, one each. */
  const judgeFailures: ScriptedAction[] = [
    { kind: "status", status: 429, headers: { "retry-after": "1" } },
    { kind: "status", status: 500 },
    { kind: "hang" },
    { kind: "malformed" },
    { kind: "reply", text: "The submission looks right to me: it follows the paper closely." },
  ];
  /** While true, every judge reply on mcts names a class the schema does not have. */
  let mctsJudgeBroken = true;
  const runA = (): string => join(work, "run-a");
  const runB = (): string => join(work, "run-b");

  beforeAll(async () => {
    server = await startScriptedServer((req) => {
      const task = taskOf(req, BY_TARGET);
      if (isJudge(req)) {
        const sub = submissionOf(req);
        if (sub.includes("find_best_action"))
          return mctsJudgeBroken
            ? verdict("mostly-right", "close enough")
            : verdict("fully-correct", "Picks the child the reference picks, with the same tie-break.");
        const failure = judgeFailures.shift();
        if (failure) return failure;
        if (sub.includes("reference_chosen_logps[i] - policy_chosen_logps[i]")) {
          // two votes of three see the slip
          return (req.body.seed ?? 0) % 3 === 2
            ? verdict("fully-correct", "Matches the DPO loss of the paper.")
            : verdict("implementation-error", "The loss is the paper's, but the chosen reward has its sign flipped.");
        }
        return verdict("fully-correct", "Computes the DPO loss and both implicit rewards exactly as the reference does.");
      }
      const model = req.body.model;
      if (model === "model-a") {
        if (task === "pref-loss") return genFailures.shift() ?? { kind: "reply", text: fence(prefGood) };
        return { kind: "reply", text: "Pick the child with the highest mean value, breaking ties by visits." };
      }
      if (task === "pref-loss") return { kind: "reply", text: fence(prefBuggy) };
      return { kind: "reply", text: fence(mctsGood, "The method:") };
    });
  }, 120_000);
  afterAll(() => server?.close());

  it("generates and grades: every failure mode of the API ends in a retry or the verdict it should", async () => {
    for (const model of ["model-a", "model-b"]) {
      const gen = join(work, `gen-${model}`);
      await seed(gen);
      const r = await runCli(
        [
          "generate",
          "--tasks-dir",
          "examples/tasks",
          "--tasks",
          ...TASKS,
          "--base-url",
          server.baseUrl,
          "--model",
          model,
          "--api-key-env",
          "LMR_TEST_API_KEY",
          "--out",
          gen,
          "-n",
          "3",
          "--temperature",
          "0.7",
          "--seed",
          "1",
          "-j",
          "2",
          "--timeout",
          "1",
          "--price",
          "1,2",
          "--json",
        ],
        { env: ENV },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const s = jsonData(r.stdout) as GenerateSummary;
      if (model === "model-a") {
        expect(s.totals).toMatchObject({ samples: 6, ok: 3, invalid: 3, failed: 0, retries: 4 });
        const kinds = s.tasks
          .find((t) => t.task_id === "pref-loss")!
          .samples.flatMap((x) => x.failures.map((f) => f.kind))
          .sort();
        expect(kinds).toEqual(["malformed", "rate-limit", "server", "timeout"]);
      } else expect(s.totals).toMatchObject({ samples: 6, ok: 6, invalid: 0, retries: 0 });
      const run = model === "model-a" ? runA() : runB();
      await seed(run);
      const e = await runCli(
        [
          "eval",
          "--tasks-dir",
          "examples/tasks",
          "--tasks",
          ...TASKS,
          "--submissions",
          join(gen, "submissions.jsonl"),
          "--out",
          run,
          "-j",
          "2",
          "--sandbox",
          "none",
        ],
        { env: { LMR_PYTHON: process.env.LMR_PYTHON ?? "/usr/bin/python3" } },
      );
      expect(e.exitCode, e.stderr).toBe(0);
    }
    expect(verdicts(await readResults(runA(), "model-a"))).toEqual({
      "mcts-best-action/0": "invalid",
      "mcts-best-action/1": "invalid",
      "mcts-best-action/2": "invalid",
      "pref-loss/0": "passed",
      "pref-loss/1": "passed",
      "pref-loss/2": "passed",
    });
    expect(verdicts(await readResults(runB(), "model-b"))).toEqual({
      "mcts-best-action/0": "passed",
      "mcts-best-action/1": "passed",
      "mcts-best-action/2": "passed",
      "pref-loss/0": "failed",
      "pref-loss/1": "failed",
      "pref-loss/2": "failed",
    });
    // grading keeps the applied submission as a diff against the masked file
    const diff = await readFile(join(runB(), "results", "model-b", "pref-loss", "0", "submission.diff"), "utf8");
    expect(diff).toMatch(/^--- a\/trainers\.py\n\+\+\+ b\/trainers\.py\n/m);
    expect(diff).toContain("+        chosen_rewards.append(beta * (reference_chosen_logps[i] - policy_chosen_logps[i]))");
    // a result graded before lmr kept the diff (here: the diff removed) is graded once more by a rerun; the rest is reused
    await rm(join(runB(), "results", "model-b", "pref-loss", "1", "submission.diff"));
    const again = await runCli(
      [
        "eval",
        "--tasks-dir",
        "examples/tasks",
        "--tasks",
        ...TASKS,
        "--submissions",
        join(work, "gen-model-b", "submissions.jsonl"),
        "--out",
        runB(),
        "-j",
        "2",
        "--sandbox",
        "none",
      ],
      { env: { LMR_PYTHON: process.env.LMR_PYTHON ?? "/usr/bin/python3" } },
    );
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain("(graded 1, reused 5)");
    expect(await readFile(join(runB(), "results", "model-b", "pref-loss", "1", "submission.diff"), "utf8")).toBe(diff);
  }, 300_000);

  const judge = (run: string, ...extra: string[]) =>
    runCli(
      [
        "judge",
        run,
        "--base-url",
        server.baseUrl,
        "--model",
        "judge-1",
        "--api-key-env",
        "LMR_TEST_API_KEY",
        "-n",
        "3",
        "--temperature",
        "0.7",
        "--seed",
        "0",
        "--timeout",
        "1",
        "--parse-retries",
        "1",
        "-j",
        "1",
        "--price",
        "2,4",
        "--json",
        ...extra,
      ],
      { env: ENV },
    );
  const judgementOf = async (run: string, model: string, task: string, sample: string): Promise<SampleJudgement> =>
    JSON.parse(await readFile(join(run, "results", nameModelFolder(model), task, sample, "judge.json"), "utf8")) as SampleJudgement;

  it("judges model a: retries 429/500/hang/malformed, re-asks a reply that is not the JSON asked for and counts it, writes no-code for samples without code", async () => {
    const before = server.requests.length;
    const r = await judge(runA());
    expect(r.exitCode, r.stderr).toBe(0);
    const s = jsonData(r.stdout) as JudgeSummary;
    // three identical submissions: one request per vote, shared; 4 HTTP retries; 1 re-ask after prose
    expect(s.totals).toMatchObject({ samples: 6, judged: 3, no_code: 3, infra: 0, reused: 0, requests: 3 + 4 + 1, parse_failures: 1 });
    expect(server.requests.length - before).toBe(8);
    expect(server.requests.slice(before).every((q) => q.body.response_format?.type === "json_schema" && q.body.model === "judge-1")).toBe(true);
    const j = await judgementOf(runA(), "model-a", "pref-loss", "0");
    expect(j).toMatchObject({
      status: "judged",
      judge_model: "judge-1",
      majority: "fully-correct",
      agreement: 1,
      parse_failures: 1,
      infra_votes: 0,
      schema_version: 1,
    });
    expect(j.votes.map((v) => v.class)).toEqual(["fully-correct", "fully-correct", "fully-correct"]);
    expect(j.votes[0]!.rationale).toMatch(/DPO loss/);
    const noCode = await judgementOf(runA(), "model-a", "mcts-best-action", "1");
    expect(noCode).toMatchObject({ status: "no-code", majority: null, requests: 0 });
    expect(noCode.reason).toMatch(/holds no code/);
  }, 120_000);

  it("judges model b: a vote that never parses is an infra vote; a sample without any class is infra (exit 3), asked again by the rerun alone", async () => {
    let before = server.requests.length;
    const r = await judge(runB());
    expect(r.exitCode, r.stderr).toBe(3);
    const s = jsonData(r.stdout) as JudgeSummary;
    // pref-loss: 3 votes; mcts: 3 votes × 2 asks, every reply outside the schema
    expect(s.totals).toMatchObject({ samples: 6, judged: 3, infra: 3, requests: 3 + 6, parse_failures: 6 });
    expect(server.requests.length - before).toBe(9);
    const bad = await judgementOf(runB(), "model-b", "mcts-best-action", "0");
    // the first of three samples with the same code made the requests, so it counts them
    expect(bad).toMatchObject({ status: "infra", majority: null, infra_votes: 3, parse_failures: 6, requests: 6 });
    expect(bad.votes.map((v) => v.parse_failures)).toEqual([2, 2, 2]);
    expect(bad.votes[0]!.error).toMatch(/2 replies did not parse.*judge-reply\.schema\.json.*\/class must be equal to one of the allowed values/);
    const pref = await judgementOf(runB(), "model-b", "pref-loss", "2");
    expect(pref).toMatchObject({ status: "judged", majority: "implementation-error" });
    expect(pref.agreement).toBeCloseTo(2 / 3, 5);

    mctsJudgeBroken = false;
    before = server.requests.length;
    const again = await judge(runB());
    expect(again.exitCode, again.stderr).toBe(0);
    expect(jsonData(again.stdout).totals).toMatchObject({ judged: 6, infra: 0, reused: 3, requests: 3 });
    expect(server.requests.length - before).toBe(3);
    expect((await judgementOf(runB(), "model-b", "mcts-best-action", "2")).majority).toBe("fully-correct");
  }, 120_000);

  it("a rerun of every step makes no new request", async () => {
    const before = server.requests.length;
    for (const [model, run] of [
      ["model-a", runA()],
      ["model-b", runB()],
    ] as const) {
      const g = await runCli(
        [
          "generate",
          "--tasks-dir",
          "examples/tasks",
          "--tasks",
          ...TASKS,
          "--base-url",
          server.baseUrl,
          "--model",
          model,
          "--api-key-env",
          "LMR_TEST_API_KEY",
          "--out",
          join(work, `gen-${model}`),
          "-n",
          "3",
          "--temperature",
          "0.7",
          "--seed",
          "1",
          "--price",
          "1,2",
          "--json",
        ],
        { env: ENV },
      );
      expect(g.exitCode, g.stderr).toBe(0);
      expect((jsonData(g.stdout) as GenerateSummary).totals).toMatchObject({ requests: 0, cached: 6 });
      const j = await judge(run);
      expect(j.exitCode, j.stderr).toBe(0);
      expect((jsonData(j.stdout) as JudgeSummary).totals).toMatchObject({ requests: 0, reused: 6 });
    }
    expect(server.requests.length).toBe(before);
    // --dry-run: the prompts with the reference and the submission, no request, nothing written
    const judgeFile = join(runB(), "results", "model-b", "pref-loss", "0", "judge.json");
    const kept = await readFile(judgeFile, "utf8");
    const dry = await runCli([
      "judge",
      runB(),
      "--base-url",
      server.baseUrl,
      "--model",
      "judge-1",
      "-n",
      "3",
      "--temperature",
      "0.7",
      "--seed",
      "0",
      "--dry-run",
    ]);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/===== pref-loss#0 \(model-b\): \d+ prompt tokens; 3\/3 votes cached/);
    expect(dry.stdout).toContain("# Reference (the original code)");
    expect(dry.stdout).toContain("chosen_rewards.append(beta * (reference_chosen_logps[i] - policy_chosen_logps[i]))");
    expect(dry.stdout).toMatch(/6 samples to judge, \d+ prompt tokens for -n 3; no request made/);
    expect(server.requests.length).toBe(before);
    expect(await readFile(judgeFile, "utf8")).toBe(kept);
  }, 120_000);

  it("lmr report over both run folders: the model × category table, tests vs judge, tokens; Markdown and JSON carry the same numbers", async () => {
    const json = await runCli(["report", runA(), runB(), "--format", "json"]);
    expect(json.exitCode, json.stderr).toBe(0);
    const s = jsonData(json.stdout) as Summary;
    const [a, b] = [s.models.find((m) => m.model === "model-a")!, s.models.find((m) => m.model === "model-b")!];
    expect(a.pass_at_1).toBe(0.5);
    expect(a.pass_at_1_ci).toMatchObject({ low: 0, high: 1, level: 0.95 });
    expect(a.judge).toMatchObject({
      judged: 3,
      no_code: 3,
      classes: { "fully-correct": 3, "implementation-error": 0, "incorrect-logic": 0 },
      tests_vs_judge: { samples: 3, both_pass: 3, tests_only: 0, judge_only: 0, both_fail: 0, kappa: null },
    });
    // b: pref-loss fails its tests and the judge says implementation-error (2 of 3 votes); mcts passes and is fully-correct
    expect(b.judge).toMatchObject({
      judged: 6,
      classes: { "fully-correct": 3, "implementation-error": 3 },
      tests_vs_judge: { samples: 6, both_pass: 3, both_fail: 3, observed: 1, kappa: 1 },
    });
    expect(b.judge!.mean_agreement).toBeCloseTo((3 * (2 / 3) + 3) / 6, 5);
    // generation tokens from generate.json (the scripted server counts 100 + 20 per reply, priced 1 and 2 $/M)
    expect(a.usage?.generation).toMatchObject({ prompt_tokens: 600, completion_tokens: 120, cost_usd: 0.00084 });
    // the judge's tokens: each request's reply counted once (three samples with the same code share their votes), priced 2 and 4 $/M
    expect(b.usage?.judge?.prompt_tokens).toBeGreaterThan(0);
    expect(b.usage?.judge?.cost_usd).toBeCloseTo((b.usage!.judge!.prompt_tokens * 2 + b.usage!.judge!.completion_tokens * 4) / 1e6, 6);
    expect(b.categories.map((c) => c.judge?.classes["fully-correct"])).toEqual(
      b.categories.map((c) => (c.category === b.tasks.find((t) => t.task_id === "mcts-best-action")!.category ? 3 : 0)),
    );
    const md = await runCli(["report", runA(), runB()]);
    expect(md.exitCode, md.stderr).toBe(0);
    expect(md.stdout).toContain("## Models by category");
    expect(md.stdout).toMatch(
      /\| `model-a` \| \*\*all\*\* \| 2 of 2 \| 50\.0% \| \[0\.0%, 100\.0%\] \| @1 50\.0%, @2 50\.0%, @3 50\.0% \| 3 correct, 0 impl\. error, 0 wrong logic, 3 no code \|/,
    );
    expect(md.stdout).toMatch(/\| `model-b` \| `judge-1` \| 6 \| 3 \| 0 \| 0 \| 3 \| 100\.0% \| 1\.00 \| 83\.3% \|/);
    expect(md.stdout).toMatch(/\| `model-a` \| 600 \| 120 \| \$0\.0008 \|/);
  }, 120_000);

  it("the HTML comparison of the two models, opened in headless Chromium: the matrix, and one opened cell", async () => {
    // an agent's log where lmr agent run will keep it: the cell shows it
    const sampleDir = join(runB(), "results", "model-b", "pref-loss", "0");
    await mkdir(join(sampleDir, "agent"), { recursive: true });
    await writeFile(join(sampleDir, "agent", "stdout.txt"), "step 1: read trainers.py\nstep 2: wrote preference_loss\n");
    const page = join(work, "compare.html");
    const r = await runCli(["report", runA(), runB(), "--format", "html", "--out", page]);
    expect(r.exitCode, r.stderr).toBe(0);
    const html = await readFile(page, "utf8");
    const anchor = sampleAnchor("model-b", "pref-loss", "0");
    expect(html).toContain('<table class="matrix">');
    expect(html).toMatch(/<th><code>model-a<\/code><\/th><th><code>model-b<\/code><\/th>/);
    const panel = html.slice(html.indexOf(`<article class="sample" id="${anchor}">`), html.indexOf("</article>", html.indexOf(`id="${anchor}"`)));
    expect(panel).toContain("the chosen reward has its sign flipped");
    expect(panel).toContain('<span class="add">+        chosen_rewards.append(beta * (reference_chosen_logps[i] - policy_chosen_logps[i]))</span>');
    expect(panel).toContain("step 2: wrote preference_loss");
    expect(panel).toMatch(/<li><code>lmr_tests\/[^<]+<\/code><\/li>/);
    expect(html).toContain(`href="#${anchor}"`);

    await mkdir(ARTIFACTS, { recursive: true });
    const shot = async (name: string, url: string): Promise<Buffer> => {
      const file = join(ARTIFACTS, name);
      const c = await execa(
        "chromium",
        ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", `--screenshot=${file}`, "--window-size=1280,1600", url],
        { reject: false, timeout: 60_000 },
      );
      expect(c.exitCode, String(c.stderr)).toBe(0);
      return readFile(file);
    };
    const closed = await shot("compare-matrix.png", `file://${page}`);
    const opened = await shot("compare-cell-opened.png", `file://${page}#${anchor}`);
    for (const png of [closed, opened]) {
      expect(png.subarray(1, 4).toString()).toBe("PNG");
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 1600]);
    }
    // the drawer of the opened cell changes the picture
    expect(opened.equals(closed)).toBe(false);
  }, 120_000);

  it("wrote the key nowhere", async () => {
    for (const dir of [work]) {
      for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
        if (!e.isFile()) continue;
        const p = join(e.parentPath, e.name);
        if ((await stat(p)).size < 5_000_000) expect((await readFile(p)).includes(KEY), p).toBe(false);
      }
    }
  });
});
