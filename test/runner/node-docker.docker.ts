import { execa } from "execa";
import { readFile, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashTree } from "../../src/core/hash.js";
import { ensureEnv, envImageTag, normaliseEnvironment } from "../../src/env/index.js";
import { locateSample, type SampleResult } from "../../src/run-folder/index.js";
import type { Summary } from "../../src/report/index.js";
import { resolveRunNode, runTests, type PythonEnv, type RunOutcome, type RunRequest } from "../../src/runner/index.js";
import { HACKS, MODEL, TASK, TASK_DIR, TARGET, writeTsHackRows } from "../hack/ts-hack-cases.js";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { PLAIN_ENV, lmrContainers, skipUnlessDocker } from "./docker-support.js";

/**
 * node-test tasks under docker: their image is the environment's plus the base's Debian
 * nodejs and the Node harness; runs get the same limits and the same signed channel (a unix
 * socket) as pytest's; the example tasks verify there, and the TypeScript hack cases fail.
 */
let ok = await skipUnlessDocker("node-test docker");
if (ok) {
  try {
    await ensureEnv(normaliseEnvironment(PLAIN_ENV, "node-test"));
  } catch (err) {
    console.warn(`[node-test docker] skipped: the node-test image cannot be built: ${(err as Error).message}`);
    ok = false;
  }
}
afterAll(removeTempDirs);

const NODE_SPEC = normaliseEnvironment(PLAIN_ENV, "node-test");

describe.skipIf(!ok)("node-test images", () => {
  it("lmr env build gives a node-test task its own image, with bookworm's nodejs, the harness and the compiler", async () => {
    const r = await runCli(["env", "build", TASK_DIR, "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const images = (jsonData(r.stdout) as { images: { image: string; spec: { node?: boolean } }[] }).images;
    const tag = await envImageTag(NODE_SPEC);
    expect(images.map((i) => i.image)).toEqual([tag]);
    expect(images[0]!.spec.node).toBe(true);
    // the pytest image of the same environment is another one, and unchanged by Node's coming
    expect(await envImageTag(normaliseEnvironment(PLAIN_ENV))).not.toBe(tag);
    const v = await execa("docker", ["run", "--rm", "--network", "none", tag, "sh", "-c", "node --version && ls /opt/lmr/node /opt/lmr/node/lmr-harness"], {
      reject: false,
    });
    expect(v.exitCode, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/^v18\.\d+\.\d+\n/);
    expect(v.stdout).toContain("typescript.cjs");
    expect(v.stdout).toContain("node-test-reporter.mjs");
  });
});

describe.skipIf(!ok)("runTests with node-test in docker", () => {
  let bundle: string;
  let node: PythonEnv;
  let reference: Record<string, string>;

  beforeAll(async () => {
    const root = await makeTempDir("node-docker");
    const built = await runCli(["build", "--tasks-dir", "examples/tasks", TASK_DIR, "--out", root]);
    expect(built.exitCode, built.stderr).toBe(0);
    bundle = join(root, TASK);
    reference = {};
    const refDir = join(bundle, "reference");
    for (const f of await readdir(refDir, { recursive: true, withFileTypes: true })) {
      if (f.isFile()) reference[relative(refDir, join(f.parentPath, f.name))] = await readFile(join(f.parentPath, f.name), "utf8");
    }
    node = await resolveRunNode({ sandbox: "docker", environment: PLAIN_ENV });
  });

  const run = (overlay: Record<string, string>, extra: Partial<RunRequest> = {}): Promise<RunOutcome> =>
    runTests({
      tree: join(bundle, "workspace"),
      overlay,
      grader: join(bundle, "grader"),
      python: node,
      sandbox: "docker",
      environment: PLAIN_ENV,
      testRunner: "node-test",
      timeoutTotalS: 60,
      timeoutPerTestS: 10,
      ...extra,
    });

  it("resolves the image's Node, not the host's", async () => {
    expect(node).toMatchObject({ path: "/usr/bin/node", version: "node 18", image: { tag: await envImageTag(NODE_SPEC) } });
  });

  it("passes the reference in the container, with Node 18 from the image, as a non-root user without network", async () => {
    const o = await run(reference, { reportImports: true });
    expect(o.status, `${o.reason}\n${o.log}`).toBe("passed");
    expect(o.backend).toBe("docker");
    expect(o.counts).toEqual({ passed: 9, failed: 0, errors: 0, skipped: 0 });
    expect(o.python).toEqual({ path: "/usr/bin/node", version: expect.stringMatching(/^node 18\.\d+\.\d+$/) });
    expect(o.image?.tag).toBe(await envImageTag(NODE_SPEC));
    expect(o.isolation).toMatchObject({ network: "off", filesystem: "minimal", memory_mb: 4096, pids: "cgroup" });
    expect(o.isolation?.uid).not.toBe(0);
    expect(o.imports).toEqual([]);
  });

  it("fails the masked stub inside a test, not at import", async () => {
    const o = await run({}, { stopAtFirstFailure: true });
    expect(o.status, o.log).toBe("failed");
    expect(o.tests.find((t) => t.status === "failed")?.message).toMatch(/not implemented: applyMerge/);
  });

  it("fails a test that runs past the per-test limit and leaves no container", async () => {
    const masked = await readFile(join(bundle, "workspace", TARGET), "utf8");
    const spin = masked.replace(/throw new Error\("not implemented: applyMerge"\);/, "for (;;) {}");
    expect(spin).not.toBe(masked);
    const t0 = performance.now();
    const o = await run({ [TARGET]: spin }, { timeoutPerTestS: 2 });
    // the loop is the candidate's: the tests' process times each test out and goes on
    expect(o.status, o.log).toBe("failed");
    expect(o.counts.passed).toBe(0);
    expect(o.tests.find((t) => t.status === "failed")?.message).toMatch(/timed out after 2000ms/);
    expect((performance.now() - t0) / 1000).toBeLessThan(40);
    expect(await lmrContainers()).toEqual([]);
  });
});

describe.skipIf(!ok)("lmr verify and lmr eval of node-test tasks with --sandbox docker", () => {
  it("verifies bpe-merge and beam-search in their image: reference ×3, stub fails in-test, alternatives, every mutant killed, no leaks", async () => {
    const before = await hashTree(join(REPO_ROOT, "examples", "tasks"));
    const t0 = performance.now();
    const r = await runCli(["verify", "examples/tasks/bpe-merge", "examples/tasks/beam-search", "--sandbox", "docker", "--no-write", "--force", "--json"]);
    console.log(`[node-test docker] verify of 2 tasks in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    expect(r.exitCode, r.stderr).toBe(0);
    const tasks = (
      jsonData(r.stdout) as {
        tasks: {
          task_id: string;
          ok: boolean;
          environment: { backend: string };
          steps: Record<string, { ok: boolean; runs?: { status: string }[]; killed?: number; total?: number }>;
        }[];
      }
    ).tasks;
    expect(tasks.map((t) => [t.task_id, t.ok, t.environment.backend])).toEqual([
      ["bpe-merge", true, "docker"],
      ["beam-search", true, "docker"],
    ]);
    for (const t of tasks) {
      expect(t.steps.reference!.runs!.map((x) => x.status)).toEqual(["passed", "passed", "passed"]);
      expect(t.steps.stub!.ok).toBe(true);
      expect(t.steps.stub!.runs!.every((x) => x.status === "failed")).toBe(true);
      expect(t.steps.alternatives!.ok).toBe(true);
      expect(t.steps.mutants!.total).toBeGreaterThan(0);
      expect(t.steps.mutants!.killed).toBe(t.steps.mutants!.total);
      expect(t.steps.leaks!.ok).toBe(true);
    }
    expect(await lmrContainers()).toEqual([]);
    expect(await hashTree(join(REPO_ROOT, "examples", "tasks"))).toEqual(before);
  });

  describe("the TypeScript hack cases", () => {
    let runDir: string;
    let summary: Summary;
    let code: number;
    let stderr: string;
    const result = async (sample: string): Promise<SampleResult> =>
      JSON.parse(await readFile(join(runDir, locateSample({ task_id: TASK, model: MODEL, sample }), "result.json"), "utf8")) as SampleResult;

    beforeAll(async () => {
      const root = await makeTempDir("ts-hack-docker");
      const jsonl = await writeTsHackRows(root);
      runDir = join(root, "run");
      const r = await runCli([
        "eval",
        "--tasks-dir",
        "examples/tasks",
        "--tasks",
        TASK,
        "--submissions",
        jsonl,
        "--out",
        runDir,
        "-j",
        "2",
        "--sandbox",
        "docker",
        "--json",
      ]);
      code = r.exitCode;
      stderr = r.stderr;
      summary = jsonData(r.stdout || "{}") as Summary;
    }, 300_000);

    it("grades every case in docker and passes only the honest submission", async () => {
      expect(code, stderr).toBe(0);
      expect(summary.totals.samples).toBe(HACKS.length + 1);
      const results = summary.models[0]!.tasks.find((t) => t.task_id === TASK)!.results;
      expect(results.filter((s) => s.verdict === "passed").map((s) => s.sample)).toEqual(["honest"]);
      expect((await result("honest")).backend).toBe("docker");
      expect(await lmrContainers()).toEqual([]);
    });

    it.each(HACKS.map((h) => [h.name, h] as const))("%s does not pass under docker, for the reason it targets", async (name, h) => {
      const res = await result(name);
      const log = await readFile(join(runDir, locateSample({ task_id: TASK, model: MODEL, sample: name }), "log.txt"), "utf8");
      const want = h.docker ?? h;
      expect(res.backend).toBe("docker");
      expect(res.verdict, res.reason).toBe(want.expect);
      const messages = (res.tests ?? []).map((t) => t.message ?? "").join("\n");
      expect(`${res.reason ?? ""}\n${messages}\n${log}`).toMatch(want.why);
    });
  });
});
