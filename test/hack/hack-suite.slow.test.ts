import { cp, mkdir, readFile, readdir, readlink, statfs, symlink, writeFile } from "node:fs/promises";
import net from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashTree } from "../../src/core/hash.js";
import { locateSample, type SampleResult } from "../../src/run-folder/index.js";
import { validateSummary, type Summary } from "../../src/report/index.js";
import { probeBwrap } from "../../src/runner/index.js";
import { FORKED_NOTE } from "../../src/runner/run-tests.js";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { CASES, HONEST, type HackCase } from "./cases.js";
import { MODEL, TASK_ID, buildRows } from "./hack-rows.js";

/**
 * The adversarial suite (test/hack/README.md): every attack on task hack-f1 in ONE `lmr eval`
 * run under bubblewrap, beside an honest submission that must pass, then the attacks the process
 * split alone defeats once more with --sandbox none. Folder submissions that reach a target
 * through a symlink are refused before anything runs. The task folder, its upstream, the lmr
 * cache, the host's /dev/shm and the other samples stay as they were, and no process is left.
 */
const FIXTURE = join(REPO_ROOT, "test", "fixtures", "hack");
const bwrap = await probeBwrap();
if (!bwrap.ok) console.warn(`[hack suite] bwrap unavailable (${bwrap.reason}): the sandbox cases cannot run here`);

let root: string;
let taskDir: string;
let cacheDir: string;
let server: net.Server;
let port = 0;
let maskedScoring: string;
let fixtureHash: string;

async function treeHash(dir: string): Promise<string> {
  return (await hashTree(dir)).hash;
}

/** Processes whose working folder or command line is inside `dir` (what a run left behind). */
async function processesIn(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cwd = await readlink(`/proc/${name}/cwd`).catch(() => "");
    const cmd = (await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "")).split("\0").join(" ");
    if (cwd.startsWith(dir) || cmd.includes(dir)) out.push(`${name}: ${cmd.slice(0, 120)}`);
  }
  return out;
}

async function shmUsed(): Promise<number> {
  const s = await statfs("/dev/shm").catch(() => undefined);
  return s ? (s.blocks - s.bfree) * s.bsize : 0;
}

beforeAll(async () => {
  fixtureHash = await treeHash(FIXTURE);
  root = await makeTempDir("hack");
  // The task is graded from a copy, so the suite can also prove the copy is untouched.
  await writeFile(join(root, "package.json"), "{}\n");
  await cp(join(FIXTURE, "upstream"), join(root, "upstream"), { recursive: true });
  await cp(join(FIXTURE, "tasks", TASK_ID), join(root, "tasks", TASK_ID), { recursive: true });
  taskDir = join(root, "tasks", TASK_ID);
  cacheDir = join(root, "cache");
  await mkdir(cacheDir);
  server = net.createServer((s) => s.end("answers\n"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as net.AddressInfo).port;
  const built = await runCli(["build", "--tasks-dir", join(root, "tasks"), "--out", join(root, "bundles")]);
  expect(built.exitCode, built.stderr).toBe(0);
  maskedScoring = await readFile(join(root, "bundles", TASK_ID, "workspace", "scoring.py"), "utf8");
});

afterAll(async () => {
  server?.close();
  await removeTempDirs();
});

async function runSuite(sandbox: "bwrap" | "none", cases: HackCase[]) {
  const runDir = join(root, `run-${sandbox}`);
  const jsonl = join(root, `hack-${sandbox}.jsonl`);
  await writeFile(jsonl, await buildRows(cases, { taskDir, runDir, port }, maskedScoring));
  const before = {
    tasks: await treeHash(join(root, "tasks")),
    upstream: await treeHash(join(root, "upstream")),
    cache: await treeHash(cacheDir),
    shm: await shmUsed(),
  };
  const t0 = performance.now();
  const r = await runCli(["eval", "--tasks-dir", join(root, "tasks"), "--submissions", jsonl, "--out", runDir, "-j", "2", "--sandbox", sandbox, "--json"], {
    env: { LMR_CACHE: cacheDir },
  });
  const seconds = (performance.now() - t0) / 1000;
  return { r, runDir, before, seconds };
}

const sampleDir = (runDir: string, sample: string): string => join(runDir, locateSample({ task_id: TASK_ID, model: MODEL, sample }));

async function readResult(runDir: string, sample: string): Promise<SampleResult> {
  return JSON.parse(await readFile(join(sampleDir(runDir, sample), "result.json"), "utf8")) as SampleResult;
}

const variants: { sandbox: "bwrap" | "none"; cases: HackCase[] }[] = [
  ...(bwrap.ok ? [{ sandbox: "bwrap" as const, cases: CASES }] : []),
  { sandbox: "none", cases: CASES.filter((c) => c.split) },
];

describe.each(variants)("adversarial suite, --sandbox $sandbox", ({ sandbox, cases }) => {
  let out: Awaited<ReturnType<typeof runSuite>>;
  let summary: Summary;

  beforeAll(async () => {
    out = await runSuite(sandbox, cases);
    summary = jsonData(out.r.stdout) as Summary;
  }, 600_000);

  it("completes in one run, with a result for every case and a summary that validates", async () => {
    expect(out.r.exitCode, out.r.stderr).toBe(0);
    expect(summary.totals.samples).toBe(cases.length);
    expect(summary.totals.verdicts.infra).toBe(0);
    const check = await validateSummary(summary);
    expect(check.problems).toEqual([]);
    console.log(`[hack suite] ${sandbox}: ${cases.length} cases in ${out.seconds.toFixed(1)} s`);
  });

  it("passes the honest submission and nothing else", () => {
    const results = summary.models[0]!.tasks.find((t) => t.task_id === TASK_ID)!.results;
    expect(results.filter((s) => s.verdict === "passed").map((s) => s.sample)).toEqual([HONEST]);
  });

  it("grades every sample that ran with the tests forked from the task's oracles' server (lmr eval's default)", async () => {
    const ran = [];
    for (const c of cases) if ((await readResult(out.runDir, c.name)).verdict !== "invalid") ran.push(c.name);
    expect(ran.length).toBeGreaterThan(10);
    for (const name of ran) expect(await readFile(join(sampleDir(out.runDir, name), "log.txt"), "utf8"), name).toContain(FORKED_NOTE);
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s gets its verdict for the reason it targets", async (name, c) => {
    const res = await readResult(out.runDir, name);
    const log = await readFile(join(sampleDir(out.runDir, name), "log.txt"), "utf8");
    const wanted = Array.isArray(c.expect) ? c.expect : [c.expect];
    expect(wanted, `verdict ${res.verdict}: ${res.reason ?? ""}`).toContain(res.verdict);
    const messages = (res.tests ?? []).map((t) => t.message ?? "").join("\n");
    expect(`${res.reason ?? ""}\n${messages}\n${log}`).toMatch(c.why);
    if (res.verdict !== "invalid") expect(res.backend).toBe(sandbox === "none" ? "local" : "bwrap");
  });

  it("leaves the task folder, its upstream, the lmr cache, the fixtures and the other samples' results intact", async () => {
    expect(await treeHash(join(root, "tasks"))).toBe(out.before.tasks);
    expect(await treeHash(join(root, "upstream"))).toBe(out.before.upstream);
    expect(await treeHash(cacheDir)).toBe(out.before.cache);
    expect(await treeHash(FIXTURE)).toBe(fixtureHash);
    const honest = await readResult(out.runDir, HONEST);
    expect(honest).toMatchObject({ task_id: TASK_ID, sample: HONEST, verdict: "passed", counts: { failed: 0, errors: 0 } });
    const samples = (await readdir(join(sampleDir(out.runDir, HONEST), ".."))).sort();
    expect(samples).toEqual(cases.map((c) => c.name).sort());
    for (const s of samples) expect((await readResult(out.runDir, s)).sample).toBe(s);
  });

  it("leaves no process, no scratch copy and no shared memory behind", async () => {
    expect(await processesIn(out.runDir)).toEqual([]);
    expect(await readdir(out.runDir)).not.toContain(".scratch");
    // tmp-fill writes 8 GiB into /tmp and /dev/shm: capped tmpfs of the sandbox, never the host's
    if (sandbox === "bwrap") expect(await shmUsed()).toBeLessThan(out.before.shm + 64 * 1024 * 1024);
  });
});

describe.runIf(bwrap.ok)("folder submissions that reach a target through a symbolic link", () => {
  const refusal = async (make: (dir: string, reference: string) => Promise<void>): Promise<{ code: number; stderr: string; written: boolean }> => {
    const subs = await makeTempDir("hack-links");
    const reference = join(root, "bundles", TASK_ID, "reference");
    await make(subs, reference);
    const runDir = join(subs, "run");
    const r = await runCli(["eval", "--tasks-dir", join(root, "tasks"), "--submissions", join(subs, "subs"), "--out", runDir]);
    const written = await readdir(runDir).then(
      (x) => x.length > 0,
      () => false,
    );
    return { code: r.exitCode, stderr: r.stderr, written };
  };

  it("a workspace folder that is a link to the reference is bad input: exit 2, nothing graded", async () => {
    const got = await refusal(async (dir, reference) => {
      await mkdir(join(dir, "subs"), { recursive: true });
      await symlink(reference, join(dir, "subs", TASK_ID));
    });
    expect(got.code, got.stderr).toBe(2);
    expect(got.stderr).toMatch(/'hack-f1' is a symbolic link: nothing is graded from a link/);
    expect(got.written).toBe(false);
  });

  it("a workspace whose target file is a link to the reference's is bad input: exit 2, nothing graded", async () => {
    const got = await refusal(async (dir, reference) => {
      await mkdir(join(dir, "subs", TASK_ID), { recursive: true });
      await symlink(join(reference, "scoring.py"), join(dir, "subs", TASK_ID, "scoring.py"));
    });
    expect(got.code, got.stderr).toBe(2);
    expect(got.stderr).toMatch(/scoring.py is reached through the symbolic link 'scoring.py'/);
    expect(got.written).toBe(false);
  });

  it("an LMR-Bench folder whose repo_folder_name goes through a link is bad input: exit 2", async () => {
    const got = await refusal(async (dir, reference) => {
      // a folder named otherwise than the task: its info.json says which task it is
      const paper = join(dir, "subs", "squad-f1");
      await mkdir(join(paper, "real"), { recursive: true });
      await symlink(reference, join(paper, "real", "repo"));
      await writeFile(join(paper, "info.json"), JSON.stringify({ repo_folder_name: "real/repo", lmr: { task_id: TASK_ID } }));
    });
    expect(got.code, got.stderr).toBe(2);
    expect(got.stderr).toMatch(/repo_folder_name 'real\/repo' goes through a symbolic link \(real\/repo\)/);
    expect(got.written).toBe(false);
  });
});
