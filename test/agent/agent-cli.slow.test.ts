import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentRecord } from "../../src/agent/run-agent.js";
import type { AgentRunSummary } from "../../src/agent/run-agents.js";
import { hashTree } from "../../src/core/hash.js";
import { probeBwrap } from "../../src/runner/backends.js";
import type { SampleResult } from "../../src/run-folder/index.js";
import { EXAMPLE_TASKS, REPO_ROOT, UPSTREAMS, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { CLI, runCli, jsonData } from "../helpers/run-cli.js";
import { execa } from "execa";

/**
 * `lmr agent run` end to end with the scripted agents of test/fixtures/agents on
 * the pref-loss example: real bwrap sandboxes, real git diffs, real pytest grading.
 */
const AGENTS = join(REPO_ROOT, "test", "fixtures", "agents");
const TASK_DIR = join(EXAMPLE_TASKS, "pref-loss");
const UPSTREAM = join(UPSTREAMS, "pref-trainer");
const bwrap = await probeBwrap();
if (!bwrap.ok) console.warn(`skipping lmr agent run tests: ${bwrap.reason}`);

const py = (script: string, ...args: string[]): string => `python3 ${join(AGENTS, script)} ${args.join(" ")}`;

async function agentRun(out: string, cmd: string, extra: string[] = []) {
  return runCli(
    [
      "agent",
      "run",
      "--tasks-dir",
      "examples/tasks",
      "--tasks",
      "pref-loss",
      "--out",
      out,
      "--agent-bind",
      AGENTS,
      "--cmd",
      cmd,
      "--sandbox",
      "bwrap",
      "--python",
      "/usr/bin/python3",
      "-j",
      "1",
      "--json",
      ...extra,
    ],
    { env: { LMR_PYTHON: "/usr/bin/python3" } },
  );
}

async function sampleFiles(out: string, model = "agent"): Promise<{ record: AgentRecord; stdout: string; patch: string; result: SampleResult; dir: string }> {
  const dir = join(out, "agent", model, "pref-loss", "0");
  return {
    dir,
    record: JSON.parse(await readFile(join(dir, "agent.json"), "utf8")) as AgentRecord,
    stdout: await readFile(join(dir, "stdout.txt"), "utf8"),
    patch: await readFile(join(dir, "patch.diff"), "utf8"),
    result: JSON.parse(await readFile(join(out, "results", model, "pref-loss", "0", "result.json"), "utf8")) as SampleResult,
  };
}

/** PIDs of processes whose command line holds `marker`, this test's own excepted. */
async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(marker)) found.push(Number(name));
  }
  return found;
}

describe.skipIf(!bwrap.ok)("lmr agent run with scripted agents", () => {
  let root: string;
  let canary: string;
  const before: Record<string, string> = {};
  const runs: Record<string, string> = {};
  const marker = `lmr-loop-marker-${process.pid}-${Date.now()}`;
  let outputs: Record<string, Awaited<ReturnType<typeof agentRun>>>;

  beforeAll(async () => {
    root = await makeTempDir("agent-cli");
    canary = join(root, "canary");
    await mkdir(canary);
    await writeFile(join(canary, "keep.txt"), "outside every sandbox\n");
    before.task = (await hashTree(TASK_DIR)).hash;
    before.upstream = (await hashTree(UPSTREAM)).hash;
    before.canary = (await hashTree(canary)).hash;
    for (const name of ["honest", "snoop", "loop", "delete", "grader"]) runs[name] = join(root, name);
    const bundle = (run: string, part: string): string => join(run, "bundles", "pref-loss", part);
    const cmds: Record<string, [string, string[]]> = {
      honest: [py("honest.py", "{workspace}", "{instruction}", "{out}"), []],
      snoop: [
        py("snoop.py", "{workspace}", TASK_DIR, bundle(runs.snoop!, "reference"), bundle(runs.snoop!, "grader"), runs.snoop!, EXAMPLE_TASKS, UPSTREAM, canary),
        [],
      ],
      loop: [py("loop.py", marker), ["--timeout", "3"]],
      delete: [py("delete.py", "{workspace}", TASK_DIR, join(runs.delete!, "bundles"), canary), []],
      grader: [py("grader_edit.py", "{workspace}"), []],
    };
    outputs = {};
    // two at a time: the machine has two cores
    const names = Object.keys(cmds);
    for (let i = 0; i < names.length; i += 2) {
      await Promise.all(names.slice(i, i + 2).map(async (n) => (outputs[n] = await agentRun(runs[n]!, cmds[n]![0], cmds[n]![1]))));
    }
  }, 240_000);
  afterAll(removeTempDirs);

  it("every run exits 0 with a graded sample and a JSON summary", () => {
    for (const [name, r] of Object.entries(outputs)) {
      expect(r.exitCode, `${name}: ${r.stderr}`).toBe(0);
      const j = jsonData(r.stdout) as { agent: AgentRunSummary; summary: { totals: { samples: number } } };
      expect(j.agent.totals.samples, name).toBe(1);
      expect(j.summary.totals.samples, name).toBe(1);
    }
  });

  it("the honest agent's patch passes, and its trajectory is kept", async () => {
    const s = await sampleFiles(runs.honest!);
    expect(s.record.status).toBe("finished");
    expect(s.record.backend).toBe("bwrap");
    expect(s.record.changed).toEqual(["trainers.py"]);
    expect(s.patch).toMatch(/^diff --git a\/trainers\.py b\/trainers\.py/m);
    expect(s.result.verdict).toBe("passed");
    expect(s.result.counts.passed).toBeGreaterThan(0);
    const traj = JSON.parse(await readFile(join(s.dir, "out", "trajectory.json"), "utf8")) as { steps: { detail: string }[] };
    expect(traj.steps[0]!.detail).toContain("mentions preference_loss: True");
    const rows = (await readFile(join(runs.honest!, "agent", "submissions.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows).toEqual([{ task_id: "pref-loss", model: "agent", sample: "0", patch: s.patch }]);
  });

  it("the snooping agent finds neither reference nor grader: its log shows each attempt failed", async () => {
    const s = await sampleFiles(runs.snoop!);
    const bundle = join(runs.snoop!, "bundles", "pref-loss");
    for (const p of [TASK_DIR, join(bundle, "reference"), join(bundle, "grader"), runs.snoop!, EXAMPLE_TASKS, UPSTREAM, canary]) {
      expect(s.stdout, p).toContain(`snoop: FAILED ${p}: `);
    }
    expect(s.stdout).not.toMatch(/snoop: (READ|LISTED|SEEN) \/(work|root|home|tmp\/lmr)/);
    expect(s.stdout).not.toContain("COPIED");
    expect(s.stdout).toContain("snoop: found no reference");
    expect(s.stdout).not.toContain("snoop: WROTE");
    for (const d of ["/etc", "/usr/local", "/opt", "/", TASK_DIR, canary]) expect(existsSync(join(d, "lmr-snoop-was-here")), d).toBe(false);
    expect(s.result.verdict).toBe("invalid");
    expect(s.result.reason).toContain("changed nothing");
  });

  it("the looping agent ends as timeout with no process left", async () => {
    const s = await sampleFiles(runs.loop!);
    expect(s.stdout).toContain(`started helpers with marker ${marker}`);
    expect(s.record.status).toBe("timeout");
    expect(s.record.wall_s).toBeGreaterThanOrEqual(3);
    expect(s.record.wall_s).toBeLessThan(15);
    expect(s.result.verdict).toBe("timeout");
    expect(s.result.reason).toContain("wall limit of 3 s");
    expect(await processesWith(marker)).toEqual([]);
  });

  it("the deleting agent gets an invalid sample naming why; nothing outside its workspace is gone", async () => {
    const s = await sampleFiles(runs.delete!);
    expect(s.stdout).toContain(`delete: FAILED ${TASK_DIR}`);
    expect(s.stdout).toContain(`delete: FAILED ${canary}`);
    expect(s.record.status).toBe("workspace-deleted");
    expect(s.result.verdict).toBe("invalid");
    expect(s.result.reason).toMatch(/deleted its workspace/);
  });

  it("the grader-editing agent's conftest.py makes its sample invalid, not passed", async () => {
    const s = await sampleFiles(runs.grader!);
    expect(s.record.changed).toEqual(expect.arrayContaining(["conftest.py", "pytest.ini"]));
    expect(s.result.verdict).toBe("invalid");
    expect(s.result.reason).toMatch(/conftest\.py|pytest\.ini/);
  });

  it("nothing outside the scratch folder changes: the task, its upstream, a canary, every run's bundle", async () => {
    expect((await hashTree(TASK_DIR)).hash).toBe(before.task);
    expect((await hashTree(UPSTREAM)).hash).toBe(before.upstream);
    expect((await hashTree(canary)).hash).toBe(before.canary);
    // bundle.json has its build time; the folders are what an agent could have touched
    for (const part of ["workspace", "reference", "grader"]) {
      const hashes = await Promise.all(Object.values(runs).map(async (r) => (await hashTree(join(r, "bundles", "pref-loss", part))).hash));
      expect(new Set(hashes).size, part).toBe(1);
    }
  });

  it("a rerun keeps the finished agent run and its grade; lmr report reads the run folder", async () => {
    const first = await sampleFiles(runs.honest!);
    const r = await agentRun(runs.honest!, py("honest.py", "{workspace}", "{instruction}", "{out}"));
    expect(r.exitCode, r.stderr).toBe(0);
    const j = jsonData(r.stdout) as { agent: AgentRunSummary };
    expect(j.agent.totals).toMatchObject({ ran: 0, reused: 1 });
    const again = await sampleFiles(runs.honest!);
    expect(again.record.finished_at).toBe(first.record.finished_at);
    expect(again.result.finished_at).toBe(first.result.finished_at);
    const rep = await runCli(["report", runs.honest!, "--format", "json"]);
    expect(rep.exitCode, rep.stderr).toBe(0);
    expect(rep.stdout).toContain('"passed": 1');
  });
});

describe.skipIf(!bwrap.ok)("lmr agent run interrupted", () => {
  afterAll(removeTempDirs);
  it("Ctrl-C of lmr takes the agent's whole process tree with it; the next run starts clean", async () => {
    const out = join(await makeTempDir("agent-int"), "run");
    const marker = `lmr-int-marker-${process.pid}-${Date.now()}`;
    const args = [
      "agent",
      "run",
      "--tasks-dir",
      "examples/tasks",
      "--tasks",
      "pref-loss",
      "--out",
      out,
      "--agent-bind",
      AGENTS,
      "--sandbox",
      "bwrap",
      "--python",
      "/usr/bin/python3",
      "--timeout",
      "300",
    ];
    const child = execa("node", [CLI, ...args, "--cmd", py("loop.py", marker)], { cwd: REPO_ROOT, reject: false, env: { LMR_PYTHON: "/usr/bin/python3" } });
    const t0 = Date.now();
    while ((await processesWith(marker)).length < 3 && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 200));
    expect((await processesWith(marker)).length).toBeGreaterThanOrEqual(3);
    child.kill("SIGINT");
    const r = await child;
    expect(r.signal ?? r.exitCode).toMatch(/SIGINT|130/);
    await new Promise((res) => setTimeout(res, 500));
    expect(await processesWith(marker)).toEqual([]);
    const again = await runCli([...args, "--cmd", "true", "--json"], { env: { LMR_PYTHON: "/usr/bin/python3" } });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(await readdir(join(out, ".scratch")).catch(() => [])).toEqual([]);
  }, 120_000);

  it("kill -9 of lmr leaves no agent process either (bwrap's --die-with-parent)", async () => {
    const out = join(await makeTempDir("agent-kill9"), "run");
    const marker = `lmr-kill9-marker-${process.pid}-${Date.now()}`;
    const args = [
      "agent",
      "run",
      "--tasks-dir",
      "examples/tasks",
      "--tasks",
      "pref-loss",
      "--out",
      out,
      "--agent-bind",
      AGENTS,
      "--sandbox",
      "bwrap",
      "--python",
      "/usr/bin/python3",
      "--timeout",
      "300",
    ];
    const child = execa("node", [CLI, ...args, "--cmd", py("loop.py", marker)], { cwd: REPO_ROOT, reject: false, env: { LMR_PYTHON: "/usr/bin/python3" } });
    const t0 = Date.now();
    while ((await processesWith(marker)).length < 3 && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 200));
    expect((await processesWith(marker)).length).toBeGreaterThanOrEqual(3);
    child.kill("SIGKILL");
    await child;
    const t1 = Date.now();
    while ((await processesWith(marker)).length > 0 && Date.now() - t1 < 5_000) await new Promise((r) => setTimeout(r, 100));
    expect(await processesWith(marker)).toEqual([]);
  }, 120_000);
});

describe("lmr agent run: bad flags stop it before anything runs", () => {
  afterAll(removeTempDirs);
  it("names the flag and the fix", async () => {
    const out = join(await makeTempDir("agent-usage"), "run");
    const cases: [string[], RegExp][] = [
      [[], /exactly one of --cmd TEMPLATE and --preset NAME/],
      [["--cmd", "x {wrkspace}"], /\{wrkspace\}, which is not a variable.*\{workspace\}/s],
      [["--preset", "claude-code"], /--preset claude-code needs --model NAME/],
      [["--preset", "gpt-agent"], /no agent preset 'gpt-agent'.*claude-code/s],
      [["--cmd", "true", "--timeout", "0"], /--timeout must be a number of seconds > 0/],
      [["--cmd", "true", "--agent-env", "sk-abc123"], /NAMES of environment variables/],
      [["--cmd", "true", "--agent-sandbox", "local"], /--agent-sandbox must be one of auto, docker, bwrap/],
    ];
    for (const [flags, message] of cases) {
      const r = await runCli(["agent", "run", "--tasks-dir", "examples/tasks", "--tasks", "pref-loss", "--out", out, ...flags]);
      expect(r.exitCode, flags.join(" ")).toBe(2);
      expect(r.stderr, flags.join(" ")).toMatch(message);
      expect(r.stderr).not.toContain("sk-abc123");
    }
    await expect(readdir(out)).rejects.toThrow();
  }, 60_000);
});
