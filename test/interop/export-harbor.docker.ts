import { execa } from "execa";
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBuildCaBundle } from "../../src/env/build.js";
import { findSecrets, taskSecrets, type Secret } from "../helpers/export-secrets.js";
import { EXAMPLE_TASKS, REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";
import { skipUnlessDocker } from "../runner/docker-support.js";

/**
 * The real `harbor` (PyPI 0.25.0, Python 3.13 from Debian trixie) runs the exported examples
 * with its docker environment: the oracle agent scores 1 on every task, the nop agent 0.
 * Harbor runs in a container of its own (test/fixtures/harbor/runner.Dockerfile, built here
 * FROM lmr-rootfs:trixie when missing) with the host's Docker socket, so the task containers
 * it starts are siblings; the export and jobs folders are mounted at the same paths.
 */
const RUNNER = "lmr-harbor-runner:0.25.0";
const ROOTFS = "lmr-rootfs:trixie";

async function imageExists(tag: string): Promise<boolean> {
  return (await execa("docker", ["image", "inspect", tag], { reject: false })).exitCode === 0;
}

async function ensureRunner(): Promise<string | undefined> {
  if (await imageExists(RUNNER)) return undefined;
  if (!(await imageExists(ROOTFS))) return `${ROOTFS} is missing: run \`lmr env base debian:trixie --from-rootfs\` first`;
  const ctx = await mkdtemp(join(tmpdir(), "lmr-harbor-runner-"));
  try {
    await cp(join(REPO_ROOT, "test", "fixtures", "harbor", "runner.Dockerfile"), join(ctx, "Dockerfile"));
    const ca = findBuildCaBundle();
    await writeFile(join(ctx, "build-ca.crt"), ca ? await readFile(ca) : "");
    const r = await execa("docker", ["build", "--network", "host", "-t", RUNNER, ctx], { reject: false, all: true });
    return r.exitCode === 0 ? undefined : `cannot build ${RUNNER}: ${String(r.all).slice(-600)}`;
  } finally {
    await rm(ctx, { recursive: true, force: true });
  }
}

const ok = await skipUnlessDocker("export-harbor");
const runnerProblem = ok ? await ensureRunner() : "no docker";
if (ok && runnerProblem) console.warn(`[export-harbor] skipped: ${runnerProblem}`);

interface JobResult {
  n_total_trials: number;
  stats: {
    n_errored_trials: number;
    evals: Record<string, { n_trials: number; n_errors: number; metrics: Record<string, number>[]; reward_stats: { reward: Record<string, string[]> } }>;
  };
}

describe.skipIf(!ok || runnerProblem !== undefined)("lmr export --format harbor, run by harbor 0.25.0", () => {
  let root: string;
  let out: string;
  let ids: string[];
  afterAll(removeTempDirs);

  beforeAll(async () => {
    root = await makeTempDir("export-harbor");
    out = join(root, "harbor");
    ids = (await readdir(EXAMPLE_TASKS)).sort();
    // the plain environment's base is the bookworm rootfs here (no registry): the Dockerfile is FROM it
    const base = process.env.LMR_BASE_IMAGE_DEBIAN_BOOKWORM ?? "lmr-rootfs:bookworm";
    const r = await runCli(["export", "--format", "harbor", "--out", out, "--tasks-dir", EXAMPLE_TASKS, "--json"], {
      env: { LMR_BASE_IMAGE_DEBIAN_BOOKWORM: base, LMR_CACHE: join(root, "cache") },
    });
    expect(r.exitCode, r.stderr).toBe(0);
  });

  it("writes Harbor's task layout; the agent's image context holds no test, fixture or reference body", async () => {
    expect((await readdir(out)).sort()).toEqual(["README.md", "adapter_metadata.json", ...ids].sort());
    const bundles = join(root, "bundles");
    expect((await runCli(["build", "--tasks-dir", EXAMPLE_TASKS, "--out", bundles], { env: { LMR_CACHE: join(root, "cache") } })).exitCode).toBe(0);
    for (const id of ids) {
      expect((await readdir(join(out, id))).sort()).toEqual(["environment", "instruction.md", "solution", "task.toml", "tests"]);
      // the paper is the agent's to read (workspace/paper.md, as lmr build puts it there)
      const secrets: Secret[] = (await taskSecrets(join(EXAMPLE_TASKS, id), join(bundles, id))).filter((s) => s.what !== "paper text");
      expect(await findSecrets(join(out, id, "environment"), secrets), id).toEqual([]);
      // where they belong: the tests Harbor copies in at verification
      expect((await findSecrets(join(out, id, "tests"), secrets)).length, id).toBeGreaterThan(0);
      const toml = await readFile(join(out, id, "task.toml"), "utf8");
      expect(toml).toContain('network_mode = "no-network"');
    }
  });

  it("harbor's oracle agent scores 1 on every task and its nop agent 0", async () => {
    // Harbor 0.25's docker environment enforces network_mode "no-network" with an egress-control
    // sidecar built FROM alpine pulled from Docker Hub, which this machine cannot reach: it refuses
    // such a task here. The run uses a copy with "public"; the tasks' containers reach no registry anyway.
    const run = join(root, "run");
    await cp(out, run, { recursive: true });
    for (const id of ids) {
      const f = join(run, id, "task.toml");
      await writeFile(f, (await readFile(f, "utf8")).replace('network_mode = "no-network"', 'network_mode = "public"'));
    }
    const jobs = join(root, "jobs");
    const harbor = async (agent: string): Promise<JobResult> => {
      const dir = join(jobs, agent);
      const r = await execa(
        "docker",
        [
          "run",
          "--rm",
          "-e",
          "COLUMNS=160",
          "-v",
          "/var/run/docker.sock:/var/run/docker.sock",
          "-v",
          `${root}:${root}`,
          "-w",
          root,
          RUNNER,
          "harbor",
          "run",
          "-p",
          run,
          "-a",
          agent,
          "-o",
          dir,
          "-n",
          "4",
          "-y",
          "-q",
        ],
        { reject: false, all: true },
      );
      expect(r.exitCode, String(r.all).slice(-3000)).toBe(0);
      const [job] = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory());
      return JSON.parse(await readFile(join(dir, job!.name, "result.json"), "utf8")) as JobResult;
    };
    for (const [agent, reward] of [
      ["oracle", 1],
      ["nop", 0],
    ] as const) {
      const res = await harbor(agent);
      expect(res.n_total_trials).toBe(ids.length);
      expect(res.stats.n_errored_trials).toBe(0);
      const ev = Object.values(res.stats.evals)[0]!;
      expect(ev.n_errors).toBe(0);
      expect(ev.metrics[0]!.reward).toBe(reward);
      expect(Object.keys(ev.reward_stats.reward)).toEqual([String(reward)]);
      expect(ev.reward_stats.reward[String(reward)]!.map((t) => t.replace(/__\w+$/, "")).sort()).toEqual(ids);
    }
  }, 900_000);
});
