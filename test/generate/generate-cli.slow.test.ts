import { cp, readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GenerateSummary } from "../../src/generate/run-generate.js";
import { PythonMasker } from "../../src/mask/python/masker.js";
import { makeTempDir, removeTempDirs, UPSTREAMS } from "../helpers/git-fixture.js";
import { execa } from "execa";
import { CLI, runCli, jsonData } from "../helpers/run-cli.js";
import { readResults, verdicts } from "../eval/helpers.js";
import { startScriptedServer, taskOf, type ScriptedAction, type ScriptedServer } from "./scripted-server.js";

const KEY = "sk-test-9f2c1d0e7b6a5";
const KEY_ENV = { LMR_TEST_API_KEY: KEY };
const BY_TARGET = { preference_loss: "pref-loss", "OpenLoopMCTS.find_best_action": "mcts-best-action", "Trainer.train_step": "dpo-grad-region" };

let work: string;
let goodReply: string;
let methodReply: string;

/** The reference preference_loss, cut out of the fixture upstream with our masker's symbol table, in a reply with prose around it. */
async function makeGoodReply(): Promise<string> {
  const source = await readFile(join(UPSTREAMS, "pref-trainer", "trainers.py"), "utf8");
  const sym = (await new PythonMasker().listSymbols(source)).find((s) => s.name === "preference_loss")!;
  const def = Buffer.from(source).subarray(sym.bytes!.start, sym.bytes!.end).toString("utf8");
  return `Here is the implementation, following equations (1)-(5).\n\n\`\`\`python\n${def}\n\`\`\`\n\nIt returns per-pair values.`;
}

/** The reference Trainer.train_step (dpo-grad-region masks a region inside it) given on its own, out of its class, with a bare fence. */
async function makeMethodReply(): Promise<string> {
  const source = await readFile(join(UPSTREAMS, "pref-trainer", "trainers.py"), "utf8");
  const sym = (await new PythonMasker().listSymbols(source)).find((s) => s.name === "Trainer.train_step")!;
  const [first, ...rest] = Buffer.from(source).subarray(sym.bytes!.start, sym.bytes!.end).toString("utf8").split("\n");
  return `\`\`\`\n${[first, ...rest.map((l) => l.replace(/^ {4}/, ""))].join("\n")}\n\`\`\``;
}

beforeAll(async () => {
  work = await makeTempDir("generate");
  goodReply = await makeGoodReply();
  methodReply = await makeMethodReply();
});
afterAll(removeTempDirs);

function generate(server: ScriptedServer, out: string, ...extra: string[]) {
  return runCli(
    [
      "generate",
      "--tasks-dir",
      "examples/tasks",
      "--base-url",
      server.baseUrl,
      "--model",
      "scripted/model-1",
      "--api-key-env",
      "LMR_TEST_API_KEY",
      "--out",
      out,
      ...extra,
    ],
    { env: KEY_ENV },
  );
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) out.push(join(e.parentPath, e.name));
  return out;
}

const exists = (p: string): Promise<boolean> =>
  stat(p).then(
    () => true,
    () => false,
  );

/** Bundles the first run built: later runs start from a copy (lmr generate reuses a bundle whose task inputs did not change) and spend no time rebuilding. */
let builtBundles: string | undefined;
async function seedBundles(out: string): Promise<void> {
  if (builtBundles !== undefined) await cp(builtBundles, join(out, "bundles"), { recursive: true });
}

describe("lmr generate -n 3 → lmr eval, against a scripted OpenAI-compatible server", () => {
  let server: ScriptedServer;
  let out: string;
  let first: { exitCode: number; stdout: string; stderr: string };
  let summary: GenerateSummary;
  // pref-loss: the first four requests fail in four ways, then every one is the good reply
  const prefFailures: ScriptedAction[] = [
    { kind: "status", status: 429, headers: { "retry-after": "1" } },
    { kind: "status", status: 500 },
    { kind: "hang" },
    { kind: "malformed" },
  ];

  beforeAll(async () => {
    let pref = 0;
    server = await startScriptedServer((req) => {
      const task = taskOf(req, BY_TARGET);
      if (task === "pref-loss") return prefFailures[pref++] ?? { kind: "reply", text: goodReply };
      if (task === "dpo-grad-region") return { kind: "reply", text: methodReply };
      if (task === "mcts-best-action")
        return {
          kind: "reply",
          text: "The best action is the child with the highest mean value; ties go to the most visited child. I would use a max over the children.",
        };
      return { kind: "status", status: 400, body: JSON.stringify({ error: { message: "unknown task in the prompt" } }) };
    });
    out = join(work, "gen");
    first = await generate(
      server,
      out,
      "--tasks",
      "pref-loss",
      "mcts-best-action",
      "dpo-grad-region",
      "-n",
      "3",
      "--temperature",
      "0.7",
      "--seed",
      "11",
      "-j",
      "3",
      "--timeout",
      "1",
      "--json",
    );
    summary = jsonData(first.stdout) as GenerateSummary;
    builtBundles = join(out, "bundles");
  });
  afterAll(() => server.close());

  it("retries 429 (after Retry-After), 500, a hang and malformed JSON, and ends with a row per sample", async () => {
    expect(first.exitCode, first.stderr).toBe(0);
    expect(summary.complete).toBe(true);
    expect(summary.totals).toMatchObject({ tasks: 3, samples: 9, ok: 6, invalid: 3, failed: 0, cached: 0, requests: 13, retries: 4 });
    expect(server.requests).toHaveLength(13);
    const pref = summary.tasks.find((t) => t.task_id === "pref-loss")!;
    const retries = pref.samples.flatMap((s) => s.failures);
    expect(retries.map((r) => r.kind).sort()).toEqual(["malformed", "rate-limit", "server", "timeout"]);
    expect(retries.find((r) => r.kind === "rate-limit")).toMatchObject({ status: 429, waited_ms: 1000 });
    expect(retries.find((r) => r.kind === "server")).toMatchObject({ status: 500 });
    expect(pref.samples.every((s) => s.status === "ok" && s.found?.[0] === "preference_loss")).toBe(true);
    expect(pref.usage).toEqual({ prompt_tokens: 300, completion_tokens: 60 });
    expect(pref.prompt_tokens).toBeGreaterThan(1000);
    // sample i goes out with seed 11 + i, the parameters as given
    expect(new Set(server.requests.map((r) => r.body.seed))).toEqual(new Set([11, 12, 13]));
    expect(server.requests.every((r) => r.body.temperature === 0.7 && r.body.model === "scripted/model-1")).toBe(true);
  });

  it("marks a reply without code invalid, with the reason", () => {
    const mcts = summary.tasks.find((t) => t.task_id === "mcts-best-action")!;
    expect(mcts.samples.map((s) => s.status)).toEqual(["invalid", "invalid", "invalid"]);
    expect(mcts.samples[0]!.reason).toMatch(/holds no code/);
  });

  it("sends the key from the named variable and writes it nowhere", async () => {
    expect(server.requests.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);
    for (const f of await listFiles(out)) expect((await readFile(f)).includes(KEY), f).toBe(false);
    expect(first.stdout + first.stderr).not.toContain(KEY);
  });

  it("writes a submission that lmr eval grades as is: the good replies pass (a method given out of its class too), the ones without code are invalid", async () => {
    const run = join(work, "run");
    const r = await runCli([
      "eval",
      "--tasks-dir",
      "examples/tasks",
      "--tasks",
      "pref-loss",
      "mcts-best-action",
      "dpo-grad-region",
      "--submissions",
      join(out, "submissions.jsonl"),
      "--out",
      run,
      "-j",
      "2",
      "--sandbox",
      "none",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const results = await readResults(run, "scripted/model-1");
    // the reason generate gave travels to the verdict
    expect(results.get("mcts-best-action/0")!.reason).toMatch(/^the submission gives no code: /);
    expect(verdicts(results)).toEqual({
      "dpo-grad-region/0": "passed",
      "dpo-grad-region/1": "passed",
      "dpo-grad-region/2": "passed",
      "mcts-best-action/0": "invalid",
      "mcts-best-action/1": "invalid",
      "mcts-best-action/2": "invalid",
      "pref-loss/0": "passed",
      "pref-loss/1": "passed",
      "pref-loss/2": "passed",
    });
  });

  it("reruns from the cache: no new request, the same submission", async () => {
    const before = await readFile(join(out, "submissions.jsonl"), "utf8");
    const again = await generate(
      server,
      out,
      "--tasks",
      "pref-loss",
      "mcts-best-action",
      "dpo-grad-region",
      "-n",
      "3",
      "--temperature",
      "0.7",
      "--seed",
      "11",
      "-j",
      "3",
      "--timeout",
      "1",
      "--json",
    );
    expect(again.exitCode, again.stderr).toBe(0);
    expect(server.requests).toHaveLength(13);
    const s = jsonData(again.stdout) as GenerateSummary;
    expect(s.totals).toMatchObject({ cached: 9, requests: 0, ok: 6, invalid: 3 });
    expect(await readFile(join(out, "submissions.jsonl"), "utf8")).toBe(before);
  });

  it("--dry-run prints the prompts and token counts, counts what is cached, makes no request and writes nothing", async () => {
    const before = (await listFiles(out)).sort();
    const r = await runCli([
      "generate",
      "--tasks-dir",
      "examples/tasks",
      "--base-url",
      server.baseUrl,
      "--model",
      "scripted/model-1",
      "--out",
      out,
      "--tasks",
      "pref-loss",
      "mcts-best-action",
      "-n",
      "4",
      "--temperature",
      "0.7",
      "--seed",
      "11",
      "--dry-run",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/===== pref-loss: \d+ prompt tokens, paper \d+ tokens \(\d+\/\d+ sections\); 3\/4 samples cached/);
    expect(r.stdout).toContain("def preference_loss(");
    expect(r.stdout).toMatch(/2 tasks, \d+ prompt tokens per sample round/);
    expect(server.requests).toHaveLength(13);
    expect((await listFiles(out)).sort()).toEqual(before);
  });
});

describe("lmr generate: bad input and a failing API", () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer((req) =>
      taskOf(req, BY_TARGET) === "pref-loss"
        ? { kind: "status", status: 401, body: JSON.stringify({ error: { message: "invalid api key" } }) }
        : { kind: "status", status: 503, headers: { "retry-after": "0" } },
    );
  });
  afterAll(() => server.close());

  it("an unknown task id, a missing key variable, a bad flag, a key given where its variable's name belongs: exit 2, the fix named, nothing written", async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["--tasks", "pref-los"], KEY_ENV, /--tasks: no task with id 'pref-los' \(did you mean 'pref-loss'\?\)/],
      [
        ["--tasks", "pref-loss", "--api-key-env", "LMR_TEST_NO_SUCH_KEY"],
        {},
        /--api-key-env: the environment variable LMR_TEST_NO_SUCH_KEY is not set.*hint: export LMR_TEST_NO_SUCH_KEY=/,
      ],
      [["--tasks", "pref-loss", "-j", "0"], KEY_ENV, /--jobs: --jobs must be a whole number >= 1, got '0'/],
      [["--tasks", "pref-loss", "--api-key-env", KEY], KEY_ENV, /--api-key-env: --api-key-env takes the NAME of an environment variable/],
    ];
    // independent runs, side by side
    await Promise.all(
      cases.map(async ([flags, env, message], i) => {
        const out = join(work, `bad-${i}`);
        const r = await runCli(
          [
            "generate",
            "--tasks-dir",
            "examples/tasks",
            "--base-url",
            server.baseUrl,
            "--model",
            "m",
            "--api-key-env",
            "LMR_TEST_API_KEY",
            "--out",
            out,
            ...flags,
          ],
          { env },
        );
        expect(r.exitCode, r.stderr).toBe(2);
        expect(r.stderr).toMatch(message);
        expect(await exists(out), out).toBe(false);
        expect(r.stdout + r.stderr).not.toContain(KEY);
      }),
    );
    expect(server.requests).toHaveLength(0);
  });

  it("a 401 is not retried, a 503 that lasts uses up the retries: exit 3, the failures in generate.json, no submissions.jsonl", async () => {
    const out = join(work, "failing");
    await seedBundles(out);
    const r = await runCli(
      [
        "generate",
        "--tasks-dir",
        "examples/tasks",
        "--base-url",
        server.baseUrl,
        "--model",
        "m",
        "--api-key-env",
        "LMR_TEST_API_KEY",
        "--out",
        out,
        "--tasks",
        "pref-loss",
        "mcts-best-action",
        "--retries",
        "2",
      ],
      { env: KEY_ENV },
    );
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/pref-loss#0: request failed: HTTP 401.*\(1 try; not retried\)/);
    expect(r.stderr).toMatch(/mcts-best-action#0: request failed: HTTP 503.*\(3 tries\)/);
    expect(server.requests).toHaveLength(4);
    const s = JSON.parse(await readFile(join(out, "generate.json"), "utf8")) as GenerateSummary;
    expect(s.complete).toBe(false);
    expect(s.totals).toMatchObject({ failed: 2, ok: 0, requests: 4, retries: 2 });
    expect(await exists(join(out, "submissions.jsonl"))).toBe(false);
  });
});

describe("lmr generate killed half-way", () => {
  it("keeps every reply it got, writes no submission, and the rerun asks only for the rest", async () => {
    let hang = true;
    const server = await startScriptedServer((_req, i) => (hang && i >= 2 ? { kind: "hang" } : { kind: "reply", text: goodReply }));
    try {
      const out = join(work, "killed");
      await seedBundles(out);
      const args = [
        CLI,
        "generate",
        "--tasks-dir",
        "examples/tasks",
        "--tasks",
        "pref-loss",
        "--base-url",
        server.baseUrl,
        "--model",
        "m",
        "--api-key-env",
        "LMR_TEST_API_KEY",
        "--out",
        out,
        "-n",
        "3",
        "-j",
        "3",
        "--temperature",
        "0.5",
        "--timeout",
        "120",
      ];
      const proc = execa("node", args, { env: { ...KEY_ENV, NO_COLOR: "1" }, reject: false });
      const responses = join(out, "responses");
      const deadline = Date.now() + 30_000;
      while (
        Date.now() < deadline &&
        !(server.requests.length >= 3 && (await listFiles(responses).catch(() => [])).filter((f) => f.endsWith(".json")).length >= 2)
      )
        await new Promise((r) => setTimeout(r, 50));
      proc.kill("SIGKILL");
      await proc;
      expect((await listFiles(responses)).filter((f) => f.endsWith(".json"))).toHaveLength(2);
      expect(await exists(join(out, "submissions.jsonl"))).toBe(false);
      expect(await exists(join(out, "generate.json"))).toBe(false);
      hang = false;
      const before = server.requests.length;
      const r = await runCli([...args.slice(1), "--json"], { env: KEY_ENV });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(server.requests.length - before).toBe(1);
      expect((jsonData(r.stdout) as GenerateSummary).totals).toMatchObject({ cached: 2, requests: 1, ok: 3 });
    } finally {
      await server.close();
    }
  });
});
