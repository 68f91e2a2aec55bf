import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentRecord } from "../../src/agent/run-agent.js";
import type { AgentRunSummary } from "../../src/agent/run-agents.js";
import { probeBwrap } from "../../src/runner/backends.js";
import type { SampleResult } from "../../src/run-folder/index.js";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { explainNoRedis, startRedis, type RedisHandle } from "../helpers/redis-server.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { spawnCli, stopGracefully } from "./helpers.js";

/**
 * `lmr agent run --queue`: the agents run on an `lmr worker` (its own bundle of
 * the task, its own sandbox, the --agent-env value from its own environment),
 * the files come back into the coordinator's run folder, and the patches are
 * graded on the queue as well.
 */
const noRedis = explainNoRedis();
if (noRedis) console.warn(noRedis);
const bwrap = await probeBwrap();
if (!bwrap.ok) console.warn(`skipping lmr agent run --queue: ${bwrap.reason}`);
afterAll(removeTempDirs);

const AGENTS = join(REPO_ROOT, "test", "fixtures", "agents");
const SECRET = "agent-key-only-on-the-worker-51c";

describe.skipIf(noRedis !== undefined || !bwrap.ok)("lmr agent run --queue", () => {
  let redis: RedisHandle;
  let work: string;
  beforeAll(async () => {
    redis = await startRedis({});
    work = await makeTempDir("queue-agent");
  });
  afterAll(async () => redis?.stop());

  const agentRun = (out: string, cmd: string, extra: string[] = []) =>
    runCli(
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
        "--queue",
        redis.url,
        "--json",
        ...extra,
      ],
      { env: { LMR_PYTHON: "/usr/bin/python3" } },
    );

  it("a worker runs the agents and grades their patches; the run folder is a local run's; a rerun runs nothing", async () => {
    const worker = spawnCli(
      [
        "worker",
        "--queue",
        redis.url,
        "--tasks-dir",
        "examples/tasks",
        "--bundles",
        join(work, "wb"),
        "--lock-s",
        "5",
        "--python",
        "/usr/bin/python3",
        "--agents",
        "2",
      ],
      { LMR_PYTHON: "/usr/bin/python3", LMR_AGENT_SECRET: SECRET },
    );
    const out = join(work, "run");
    // sample 0 and 1: the honest agent, which also prints whether it was given the secret's variable
    const cmd = `sh -c 'echo "secret set: \${{LMR_AGENT_SECRET:+yes}}"; exec python3 ${join(AGENTS, "honest.py")} {workspace} {instruction} {out}'`;
    const r = await agentRun(out, cmd, ["-n", "2", "--agent-env", "LMR_AGENT_SECRET"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/agent runs through the queue at redis:\/\/\S+: \S+ \(2\)/);
    const j = jsonData(r.stdout) as { agent: AgentRunSummary; summary: { totals: { samples: number; passed: number } } };
    expect(j.agent.totals).toMatchObject({ samples: 2, ran: 2, finished: 2, infra: 0 });
    expect(j.summary.totals).toMatchObject({ samples: 2, passed: 2 });
    for (const s of ["0", "1"]) {
      const dir = join(out, "agent", "agent", "pref-loss", s);
      const record = JSON.parse(await readFile(join(dir, "agent.json"), "utf8")) as AgentRecord;
      expect(record).toMatchObject({ status: "finished", backend: "bwrap", changed: ["trainers.py"] });
      const stdout = await readFile(join(dir, "stdout.txt"), "utf8");
      expect(stdout).toContain("secret set: yes");
      expect(stdout).not.toContain(SECRET);
      expect(await readFile(join(dir, "patch.diff"), "utf8")).toMatch(/^diff --git a\/trainers\.py/m);
      expect(JSON.parse(await readFile(join(dir, "out", "trajectory.json"), "utf8"))).toHaveProperty("steps");
      const result = JSON.parse(await readFile(join(out, "results", "agent", "pref-loss", s, "result.json"), "utf8")) as SampleResult;
      expect(result.verdict).toBe("passed");
    }
    // the secret's value reached the agent on the worker only: nothing on this side holds it
    const again = await agentRun(out, cmd, ["-n", "2", "--agent-env", "LMR_AGENT_SECRET"]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect((jsonData(again.stdout) as { agent: AgentRunSummary }).agent.totals).toMatchObject({ ran: 0, reused: 2 });
    expect(again.stderr).toContain("none needed");
    expect(await stopGracefully(worker)).toBe(0);
  });

  it("a looping agent on a worker ends as timeout, graded timeout", async () => {
    const worker = spawnCli(
      ["worker", "--queue", redis.url, "--tasks-dir", "examples/tasks", "--bundles", join(work, "wb"), "--lock-s", "5", "--python", "/usr/bin/python3"],
      { LMR_PYTHON: "/usr/bin/python3" },
    );
    const out = join(work, "loop");
    const marker = `lmr-queue-loop-${process.pid}-${Date.now()}`;
    const r = await agentRun(out, `python3 ${join(AGENTS, "loop.py")} ${marker}`, ["--timeout", "3"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const record = JSON.parse(await readFile(join(out, "agent", "agent", "pref-loss", "0", "agent.json"), "utf8")) as AgentRecord;
    expect(record.status).toBe("timeout");
    const result = JSON.parse(await readFile(join(out, "results", "agent", "pref-loss", "0", "result.json"), "utf8")) as SampleResult;
    expect(result.verdict).toBe("timeout");
    expect(await processesWith(marker)).toEqual([]);
    expect(await stopGracefully(worker)).toBe(0);
  });
});

async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(marker)) found.push(Number(name));
  }
  return found;
}
