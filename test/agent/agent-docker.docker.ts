import { execa } from "execa";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentRecord } from "../../src/agent/run-agent.js";
import { ensureEnv, normaliseEnvironment } from "../../src/env/index.js";
import type { SampleResult } from "../../src/run-folder/index.js";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";
import { PLAIN_ENV, skipUnlessDocker } from "../runner/docker-support.js";

/** lmr agent run with --agent-image: the scripted agents in the plain task image (it has python3). */
const ok = await skipUnlessDocker("agent-docker");
const AGENTS = join(REPO_ROOT, "test", "fixtures", "agents");

describe.skipIf(!ok)("lmr agent run in docker", () => {
  afterAll(removeTempDirs);

  it("the honest agent's patch passes; the looping one ends as timeout with its container gone", async () => {
    const image = (await ensureEnv(normaliseEnvironment(PLAIN_ENV))).env.tag;
    const root = await makeTempDir("agent-docker");
    const run = async (name: string, cmd: string, extra: string[] = []) => {
      const out = join(root, name);
      const r = await runCli(
        [
          "agent",
          "run",
          "--tasks-dir",
          "examples/tasks",
          "--tasks",
          "pref-loss",
          "--out",
          out,
          "--agent-image",
          image,
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
          ...extra,
        ],
        { env: { LMR_PYTHON: "/usr/bin/python3" } },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const dir = join(out, "agent", "agent", "pref-loss", "0");
      return {
        record: JSON.parse(await readFile(join(dir, "agent.json"), "utf8")) as AgentRecord,
        stdout: await readFile(join(dir, "stdout.txt"), "utf8"),
        result: JSON.parse(await readFile(join(out, "results", "agent", "pref-loss", "0", "result.json"), "utf8")) as SampleResult,
        kept: await readdir(join(dir, "out")).catch(() => [] as string[]),
      };
    };
    const honest = await run("honest", `python3 ${join(AGENTS, "honest.py")} {workspace} {instruction} {out}`);
    expect(honest.record.backend).toBe("docker");
    expect(honest.result.verdict).toBe("passed");
    expect(honest.kept).toEqual(["trajectory.json"]);

    const snoop = await run(
      "snoop",
      `python3 ${join(AGENTS, "snoop.py")} {workspace} ${join(REPO_ROOT, "examples", "tasks", "pref-loss")} ${join(root, "snoop")}`,
    );
    expect(snoop.stdout).toContain("snoop: found no reference");
    expect(snoop.result.verdict).toBe("invalid");

    const loop = await run("loop", `python3 ${join(AGENTS, "loop.py")} lmr-docker-loop`, ["--timeout", "5"]);
    expect(loop.record.status).toBe("timeout");
    expect(loop.result.verdict).toBe("timeout");
    await new Promise((r) => setTimeout(r, 1000));
    const ps = await execa("docker", ["ps", "--all", "--filter", "name=lmr-agent-", "--format", "{{.Names}}"], { reject: false });
    expect(String(ps.stdout).trim()).toBe("");
  });
});
