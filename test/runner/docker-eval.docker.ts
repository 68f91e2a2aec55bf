import { spawn } from "node:child_process";
import { cp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashTree } from "../../src/core/hash.js";
import { locateSample, type SampleResult } from "../../src/run-folder/index.js";
import { validateSummary, type Summary } from "../../src/report/index.js";
import {
  PY_EXAMPLES,
  TASK_IDS,
  buildExampleBundles,
  countResultFiles,
  processesUsing,
  readResults,
  referenceFiles,
  referencePatch,
  stubPatch,
  verdicts,
  writeJsonl,
} from "../eval/helpers.js";
import { CASES, HONEST } from "../hack/cases.js";
import { MODEL, TASK_ID, buildRows } from "../hack/hack-rows.js";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { CLI, runCli, jsonData } from "../helpers/run-cli.js";
import { lmrContainers, skipUnlessDocker } from "./docker-support.js";

/**
 * `lmr eval --sandbox docker` end to end: the hack suite (test/hack: every attack
 * and one honest submission, one run) and a kill -9 of the evaluator mid-run.
 */
const ok = await skipUnlessDocker("docker eval");
const FIXTURE = join(REPO_ROOT, "test", "fixtures", "hack");
afterAll(removeTempDirs);

const treeHash = async (dir: string): Promise<string> => (await hashTree(dir)).hash;

describe.skipIf(!ok)("hack suite, --sandbox docker", () => {
  let root: string;
  let runDir: string;
  let summary: Summary;
  let before: { tasks: string; upstream: string; fixture: string };
  let exitCode: number;
  let stderr: string;
  let server: net.Server;

  beforeAll(async () => {
    root = await makeTempDir("hack-docker");
    await writeFile(join(root, "package.json"), "{}\n");
    await cp(join(FIXTURE, "upstream"), join(root, "upstream"), { recursive: true });
    await cp(join(FIXTURE, "tasks", TASK_ID), join(root, "tasks", TASK_ID), { recursive: true });
    const taskDir = join(root, "tasks", TASK_ID);
    server = net.createServer((s) => s.end("answers\n"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as net.AddressInfo).port;
    const built = await runCli(["env", "build", taskDir]);
    expect(built.exitCode, built.stderr).toBe(0);
    const bundles = await runCli(["build", "--tasks-dir", join(root, "tasks"), "--out", join(root, "bundles")]);
    expect(bundles.exitCode, bundles.stderr).toBe(0);
    const masked = await readFile(join(root, "bundles", TASK_ID, "workspace", "scoring.py"), "utf8");
    runDir = join(root, "run-docker");
    const jsonl = join(root, "hack.jsonl");
    await writeFile(jsonl, await buildRows(CASES, { taskDir, runDir, port }, masked));
    before = { tasks: await treeHash(join(root, "tasks")), upstream: await treeHash(join(root, "upstream")), fixture: await treeHash(FIXTURE) };
    const t0 = performance.now();
    const r = await runCli(["eval", "--tasks-dir", join(root, "tasks"), "--submissions", jsonl, "--out", runDir, "-j", "2", "--sandbox", "docker", "--json"]);
    console.log(`[hack suite] docker: ${CASES.length} cases in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    exitCode = r.exitCode;
    stderr = r.stderr;
    summary = jsonData(r.stdout) as Summary;
  }, 300_000);

  afterAll(() => server?.close());

  const sampleDir = (sample: string): string => join(runDir, locateSample({ task_id: TASK_ID, model: MODEL, sample }));
  const result = async (sample: string): Promise<SampleResult> => JSON.parse(await readFile(join(sampleDir(sample), "result.json"), "utf8")) as SampleResult;

  it("grades every case in one run, passes the honest one and nothing else", async () => {
    expect(exitCode, stderr).toBe(0);
    expect(summary.totals.samples).toBe(CASES.length);
    expect(summary.totals.verdicts.infra).toBe(0);
    expect((await validateSummary(summary)).problems).toEqual([]);
    const passed = summary.models[0]!.tasks.find((t) => t.task_id === TASK_ID)!
      .results.filter((s) => s.verdict === "passed")
      .map((s) => s.sample);
    expect(passed).toEqual([HONEST]);
  });

  it.each(CASES.map((c) => [c.name, c] as const))("%s gets the sandboxed verdict for the reason it targets", async (name, c) => {
    const res = await result(name);
    const log = await readFile(join(sampleDir(name), "log.txt"), "utf8");
    const wanted = Array.isArray(c.expect) ? c.expect : [c.expect];
    expect(wanted, `verdict ${res.verdict}: ${res.reason ?? ""}`).toContain(res.verdict);
    expect(`${res.reason ?? ""}\n${log}`).toMatch(c.why);
    if (res.verdict !== "invalid") expect(res.backend).toBe("docker");
  });

  it("leaves the task folder, its upstream and the fixtures byte-identical, and no container, process or scratch copy", async () => {
    expect(await treeHash(join(root, "tasks"))).toBe(before.tasks);
    expect(await treeHash(join(root, "upstream"))).toBe(before.upstream);
    expect(await treeHash(FIXTURE)).toBe(before.fixture);
    expect(await lmrContainers()).toEqual([]);
    expect(await processesUsing(join(runDir, ".scratch"))).toEqual([]);
    expect(await readdir(runDir)).not.toContain(".scratch");
  });
});

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!ok)("kill -9 during lmr eval --sandbox docker, then the same command", () => {
  it("the next run removes the killed run's containers as it starts and resumes to the clean verdicts", async () => {
    const bundles = await buildExampleBundles();
    const work = await makeTempDir("kill-docker");
    const built = await runCli(["env", "build", "--tasks-dir", "examples/tasks"]);
    expect(built.exitCode, built.stderr).toBe(0);
    // The first sample sleeps at import, so its container is still running when the kill comes.
    const rows: unknown[] = [];
    for (const t of TASK_IDS) {
      const ref = await referencePatch(bundles, t);
      if (rows.length === 0) {
        const files = await referenceFiles(bundles, t);
        const [f] = Object.keys(files);
        rows.push({ task_id: t, model: "m", files: { [f!]: `import time as _t\n_t.sleep(20)\n${files[f!]}` } });
      } else rows.push({ task_id: t, model: "m", patch: ref });
      rows.push({ task_id: t, model: "m", patch: await stubPatch(bundles, t, work) });
    }
    const jsonl = join(work, "subs.jsonl");
    await writeJsonl(jsonl, rows);
    const runDir = join(work, "run");
    const args = ["eval", "--tasks-dir", "examples/tasks", ...PY_EXAMPLES, "--submissions", jsonl, "--out", runDir, "-j", "2", "--sandbox", "docker"];
    const child = spawn("node", [CLI, ...args], { cwd: REPO_ROOT, detached: true, stdio: "ignore", env: { ...process.env, NO_COLOR: "1" } });
    const exited = new Promise<void>((r) => child.on("exit", () => r()));
    await waitFor("some results", async () => ((await countResultFiles(runDir).catch(() => 0)) >= 3 ? true : undefined), 120_000);
    process.kill(-child.pid!, "SIGKILL");
    await exited;
    const leftover = await lmrContainers();
    expect(leftover.length, "a container of the killed run is still running").toBeGreaterThan(0);

    const rerun = spawn("node", [CLI, ...args, "--json"], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    let out = "";
    let err = "";
    rerun.stdout.on("data", (d: Buffer) => (out += d.toString()));
    rerun.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = new Promise<number>((r) => rerun.on("exit", (c) => r(c ?? -1)));
    // Gone within seconds of the rerun starting, not when the rerun ends.
    await waitFor("the killed run's containers to go", async () => ((await lmrContainers()).some((n) => leftover.includes(n)) ? undefined : true), 15_000);
    expect(await code, err).toBe(0);
    const summary = jsonData<Summary>(out);
    expect(summary.totals).toMatchObject({ tasks: TASK_IDS.length, samples: 2 * TASK_IDS.length });
    const resumed = verdicts(await readResults(runDir));
    expect(Object.values(resumed).filter((v) => v === "passed")).toHaveLength(TASK_IDS.length);
    expect(Object.values(resumed).filter((v) => v === "failed")).toHaveLength(TASK_IDS.length);
    expect(await lmrContainers()).toEqual([]);
    expect(await readdir(runDir)).not.toContain(".scratch");
    await rm(work, { recursive: true, force: true });
  }, 300_000);
});

describe.skipIf(!ok)("SIGTERM of lmr eval --sandbox docker", () => {
  it("removes the running containers before lmr exits", async () => {
    const bundles = await buildExampleBundles();
    const work = await makeTempDir("term-docker");
    const t = TASK_IDS[0]!;
    const files = await referenceFiles(bundles, t);
    const [f] = Object.keys(files);
    const rows = [0, 1].map(() => ({ task_id: t, model: "m", files: { [f!]: `import time as _t\n_t.sleep(30)\n${files[f!]}` } }));
    const jsonl = join(work, "subs.jsonl");
    await writeJsonl(jsonl, rows);
    const child = spawn(
      "node",
      [CLI, "eval", "--tasks-dir", "examples/tasks", ...PY_EXAMPLES, "--submissions", jsonl, "--out", join(work, "run"), "-j", "2", "--sandbox", "docker"],
      { cwd: REPO_ROOT, stdio: "ignore", env: { ...process.env, NO_COLOR: "1" } },
    );
    const exited = new Promise<void>((r) => child.on("exit", () => r()));
    const mine = async (): Promise<string[]> => (await lmrContainers()).filter((n) => n.startsWith(`lmr-run-${child.pid}-`));
    await waitFor("its containers", async () => ((await mine()).length > 0 ? true : undefined), 60_000);
    child.kill("SIGTERM");
    await exited;
    expect(await mine()).toEqual([]);
  }, 120_000);
});
