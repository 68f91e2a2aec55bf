import { cp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashTree } from "../../src/core/hash.js";
import { locateSample, type SampleResult } from "../../src/run-folder/index.js";
import { validateSummary, type Summary } from "../../src/report/index.js";
import { probeBwrap, selectBackend } from "../../src/runner/index.js";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";
import { CASES, HONEST, type HackCase } from "./cases.js";
import { MODEL, TASK_ID, buildRows } from "./hack-rows.js";

/**
 * The hack suite: every adversarial submission in ONE `lmr eval` run per
 * backend, beside one honest submission that must pass. See README.md for
 * what each case tries and why it fails.
 */
const FIXTURE = join(REPO_ROOT, "test", "fixtures", "hack");
const bwrap = await probeBwrap();
// auto takes docker where the task's image is built (lmr env build), else bwrap, else local
const autoChoice = await selectBackend("auto", JSON.parse(await readFile(join(FIXTURE, "tasks", TASK_ID, "task.json"), "utf8")).environment);
const autoBackend = "backend" in autoChoice ? autoChoice.backend.name : "local";
if (!bwrap.ok) console.warn(`[hack suite] bwrap unavailable (${bwrap.reason}); the auto run uses the local backend and the sandbox-only cases are skipped`);

let root: string;
let taskDir: string;
let server: net.Server;
let port = 0;
let maskedScoring: string;
let fixtureHash: string;

async function treeHash(dir: string): Promise<string> {
  return (await hashTree(dir)).hash;
}

/** Processes whose environment or cwd points into a run's scratch folder (fork-loop's children, say). */
async function processesUsing(dir: string): Promise<number[]> {
  const out: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const env = await readFile(`/proc/${name}/environ`, "latin1").catch(() => "");
    if (env.includes(`TMPDIR=${dir}/`)) out.push(Number(name));
  }
  return out;
}

beforeAll(async () => {
  fixtureHash = await treeHash(FIXTURE);
  root = await makeTempDir("hack");
  // The task is graded from a copy, so the suite can also prove the copy is untouched.
  await writeFile(join(root, "package.json"), "{}\n");
  await cp(join(FIXTURE, "upstream"), join(root, "upstream"), { recursive: true });
  await cp(join(FIXTURE, "tasks", TASK_ID), join(root, "tasks", TASK_ID), { recursive: true });
  taskDir = join(root, "tasks", TASK_ID);
  server = net.createServer((s) => s.end("answers\n"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as net.AddressInfo).port;
  const built = await runCli(["build", "--tasks-dir", join(root, "tasks"), "--out", join(root, "bundles")]);
  expect(built.exitCode, built.stderr).toBe(0);
  maskedScoring = await readFile(join(root, "bundles", TASK_ID, "workspace", "scoring.py"), "utf8");
});

afterAll(async () => {
  server?.close();
  await rm("/tmp/lmr-hack-forged-junit.xml", { force: true });
  await removeTempDirs();
});

async function runSuite(sandbox: "auto" | "none", cases: HackCase[]) {
  const runDir = join(root, `run-${sandbox}`);
  const jsonl = join(root, `hack-${sandbox}.jsonl`);
  await writeFile(jsonl, await buildRows(cases, { taskDir, runDir, port }, maskedScoring));
  const taskBefore = await treeHash(join(root, "tasks"));
  const upstreamBefore = await treeHash(join(root, "upstream"));
  const t0 = performance.now();
  const r = await runCli(["eval", "--tasks-dir", join(root, "tasks"), "--submissions", jsonl, "--out", runDir, "-j", "2", "--sandbox", sandbox, "--json"]);
  const seconds = (performance.now() - t0) / 1000;
  return { r, runDir, taskBefore, upstreamBefore, seconds };
}

const sampleDir = (runDir: string, sample: string): string => join(runDir, locateSample({ task_id: TASK_ID, model: MODEL, sample }));

async function readResult(runDir: string, sample: string): Promise<SampleResult> {
  return JSON.parse(await readFile(join(sampleDir(runDir, sample), "result.json"), "utf8")) as SampleResult;
}

const variants: { sandbox: "auto" | "none"; cases: HackCase[] }[] = [
  { sandbox: "auto", cases: CASES.filter((c) => bwrap.ok || c.expect.none !== undefined) },
  { sandbox: "none", cases: CASES.filter((c) => c.expect.none !== undefined) },
];

describe.each(variants)("hack suite, --sandbox $sandbox", ({ sandbox, cases }) => {
  let out: Awaited<ReturnType<typeof runSuite>>;
  let summary: Summary;

  beforeAll(async () => {
    out = await runSuite(sandbox, cases);
    summary = JSON.parse(out.r.stdout) as Summary;
  }, 120_000);

  it("completes in one run, with a result for every case and a summary that validates", async () => {
    expect(out.r.exitCode, out.r.stderr).toBe(0);
    expect(summary.totals.samples).toBe(cases.length);
    expect(summary.totals.verdicts.infra).toBe(0);
    const check = await validateSummary(summary);
    expect(check.problems).toEqual([]);
    expect(JSON.parse(await readFile(join(out.runDir, "summary.json"), "utf8"))).toEqual(summary);
    console.log(`[hack suite] ${sandbox}: ${cases.length} cases in ${out.seconds.toFixed(1)} s`);
  });

  it("passes the honest submission and nothing else", () => {
    expect(summary.models.map((m) => m.model)).toEqual([MODEL]);
    const results = summary.models[0]!.tasks.find((t) => t.task_id === TASK_ID)!.results;
    const passed = results.filter((s) => s.verdict === "passed").map((s) => s.sample);
    expect(passed).toEqual([HONEST]);
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s gets its verdict for the reason it targets", async (name, c) => {
    const res = await readResult(out.runDir, name);
    const log = await readFile(join(sampleDir(out.runDir, name), "log.txt"), "utf8");
    const want = sandbox === "auto" ? c.expect.auto : c.expect.none;
    const wanted = Array.isArray(want) ? want : [want];
    expect(wanted, `verdict ${res.verdict}: ${res.reason ?? ""}`).toContain(res.verdict);
    expect(`${res.reason ?? ""}\n${log}`).toMatch(c.why);
    if (res.verdict !== "invalid") expect(res.backend).toBe(sandbox === "none" ? "local" : autoBackend);
  });

  it("leaves the task folder, its upstream, the fixtures and the other samples' results intact", async () => {
    expect(await treeHash(join(root, "tasks"))).toBe(out.taskBefore);
    expect(await treeHash(join(root, "upstream"))).toBe(out.upstreamBefore);
    expect(await treeHash(FIXTURE)).toBe(fixtureHash);
    const honest = await readResult(out.runDir, HONEST);
    expect(honest).toMatchObject({ task_id: TASK_ID, sample: HONEST, verdict: "passed", counts: { failed: 0, errors: 0 } });
    const run = JSON.parse(await readFile(join(out.runDir, "run.json"), "utf8"));
    expect(run.tasks).toEqual([TASK_ID]);
    const samples = (await readdir(join(sampleDir(out.runDir, HONEST), ".."))).sort();
    expect(samples).toEqual(cases.map((c) => c.name).sort());
    for (const s of samples) expect((await readResult(out.runDir, s)).sample).toBe(s);
  });

  it("leaves no test process and no scratch copy behind", async () => {
    expect(await processesUsing(join(out.runDir, ".scratch"))).toEqual([]);
    expect(await readdir(out.runDir)).not.toContain(".scratch");
    expect(await readdir(out.runDir)).not.toContain(".lock");
  });
});
