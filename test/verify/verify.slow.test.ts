import { execa } from "execa";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashTaskInputs } from "../../src/bundle/index.js";
import { loadTask } from "../../src/manifest/load.js";
import type { VerificationRecord } from "../../src/verify/record.js";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { CLI, runCli, type CliResult, jsonData, jsonEnvelope } from "../helpers/run-cli.js";
import { copyTask } from "../helpers/task-copy.js";
import { compileVerifySchemas, schemaErrors } from "./schemas.js";

afterAll(removeTempDirs);

type Output = { tasks: (VerificationRecord & { unchanged: boolean })[]; problems?: unknown[] };

const BROKEN = join("test", "fixtures", "broken-tasks");
const schemas = compileVerifySchemas();
const SMALL = ["--runs", "3", "--mutants", "10", "--no-write", "-j", "1"];

/** Runs `lmr verify ... --json` and checks what every --json run must satisfy: only JSON on stdout, valid against the schema, no noise on stderr. */
async function verifyJson(args: string[]): Promise<{ r: CliResult; out: Output }> {
  const r = await runCli(["verify", ...args, "--json"]);
  let out: Output;
  try {
    out = jsonData(r.stdout) as Output;
  } catch {
    throw new Error(`stdout is not JSON (exit ${r.exitCode}):\n${r.stdout}\n--- stderr:\n${r.stderr}`);
  }
  expect(schemaErrors(schemas.output, out)).toEqual([]);
  // not a TTY: no progress; only what --sandbox auto chose and why, once per reason
  expect(r.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("lmr: --sandbox auto "))).toEqual([]);
  return { r, out };
}

async function verifyOne(caseName: string, extra: string[] = SMALL): Promise<{ exitCode: number; record: VerificationRecord }> {
  const { r, out } = await verifyJson([join(BROKEN, caseName), ...extra]);
  expect(out.tasks).toHaveLength(1);
  const { unchanged, ...record } = out.tasks[0]!;
  expect(unchanged).toBe(false);
  expect(schemaErrors(schemas.record, record)).toEqual([]);
  return { exitCode: r.exitCode, record };
}

describe.concurrent("lmr verify on deliberately broken tasks", () => {
  it("stub-passes: fails at the stub step, saying the stub passes", async () => {
    const { exitCode, record } = await verifyOne("stub-passes");
    expect(exitCode).toBe(1);
    expect(record.failure).toMatchObject({ step: "stub", kind: "check" });
    expect(record.failure!.reason).toContain("the masked stub passes every test");
    expect(record.steps.reference.ok).toBe(true);
    expect(record.steps.stub.runs.map((x) => x.status)).toEqual(["passed", "passed", "passed"]);
  });

  it("import-only-failure: fails at the stub step because the stub fails only at import/collection", async () => {
    const { exitCode, record } = await verifyOne("import-only-failure");
    expect(exitCode).toBe(1);
    expect(record.failure).toMatchObject({ step: "stub", kind: "check" });
    expect(record.failure!.reason).toContain("fails only at import/collection");
    expect(record.failure!.reason).toContain("NotImplementedError");
    expect(record.steps.reference.runs.every((x) => x.status === "passed")).toBe(true);
    expect(record.steps.stub.runs.map((x) => x.status)).toEqual(["error", "error", "error"]);
  });

  it("flaky: fails at the reference step as flaky, with how often it passed and which tests flipped", async () => {
    // 20 tied votes, each passing with p = 0.5 per run: some test flips between 3 runs with
    // probability 1 - 0.25^20, so this test is deterministic in practice
    const { exitCode, record } = await verifyOne("flaky");
    expect(exitCode).toBe(1);
    expect(record.failure).toMatchObject({ step: "reference", kind: "check" });
    expect(record.failure!.reason).toMatch(/^flaky: passed [0-3]\/3 runs; \d+ test\(s\) changed outcome between runs/);
    const flaky = record.steps.reference.flaky_tests ?? [];
    expect(flaky.length).toBeGreaterThan(0);
    expect(flaky.every((id) => /test_matches_recorded_answer\[tie-\d\d\]$/.test(id))).toBe(true);
    // the stub is fine and mutants are not run against a reference that does not pass
    expect(record.steps.stub.ok).toBe(true);
    expect(record.steps.mutants).toMatchObject({ ok: false, skipped: true });
  });

  it("leaked: fails at the leaks step, naming the file that holds the copy", async () => {
    const { exitCode, record } = await verifyOne("leaked");
    expect(exitCode).toBe(1);
    expect(record.failure).toMatchObject({ step: "leaks", kind: "check" });
    expect(record.failure!.reason).toContain("legacy_metrics.py");
    expect(record.steps.leaks.leaks).toContainEqual(expect.objectContaining({ file: "legacy_metrics.py", kind: "copy", target: "metrics.py::ndcg_at_k" }));
    for (const s of ["manifest", "build", "reference", "stub", "mutants"] as const) expect(record.steps[s].ok).toBe(true);
  });

  it("leaked-allowed: the same leak listed in verification.allowed_leaks verifies, with the leak shown as allowed", async () => {
    const { exitCode, record } = await verifyOne("leaked-allowed");
    expect(exitCode).toBe(0);
    expect(record.ok).toBe(true);
    expect(record.failure).toBeUndefined();
    expect(record.steps.leaks.leaks).toContainEqual(expect.objectContaining({ file: "legacy_metrics.py", allowed: true }));
    expect(record.steps.leaks.reason).toContain("allowed");
  });

  it("weak-tests: fails at the mutants step with the kill ratio and the survivors", async () => {
    const { exitCode, record } = await verifyOne("weak-tests");
    expect(exitCode).toBe(1);
    expect(record.failure).toMatchObject({ step: "mutants", kind: "check" });
    const m = record.steps.mutants;
    expect(m.total).toBe(10);
    expect(m.kill_ratio).toBeLessThan(0.5);
    expect(m.threshold).toBe(0.5);
    expect(m.survivors.length).toBe(m.total - m.killed);
    expect(record.failure!.reason).toContain(`kill ${m.killed}/${m.total} mutants (ratio ${m.kill_ratio}), below the threshold 0.5`);
    expect(record.failure!.reason).toContain(m.survivors[0]!.description);
    expect(record.steps.stub.ok && record.steps.reference.ok).toBe(true);
  });

  it("bad-manifest: fails at the manifest step (exit 1), lists every problem and runs nothing else", async () => {
    const { exitCode, record } = await verifyOne("bad-manifest");
    expect(exitCode).toBe(1);
    expect(record.task_id).toBe("bad-manifest");
    expect(record.failure).toMatchObject({ step: "manifest", kind: "check" });
    const problems = record.steps.manifest.problems ?? [];
    expect(problems.some((p) => p.includes("/targets/0/mode"))).toBe(true);
    expect(problems.some((p) => p.includes("/tests/timeout_total_s"))).toBe(true);
    expect(problems.some((p) => p.includes("/verification/min_kill_ratio"))).toBe(true);
    for (const s of ["build", "reference", "stub", "mutants", "leaks"] as const) expect(record.steps[s].skipped).toBe(true);
  });

  it("an invalid manifest fails only its own task: the others are still verified", async () => {
    const { r, out } = await verifyJson([
      join(BROKEN, "bad-manifest"),
      join(BROKEN, "leaked-allowed"),
      "--runs",
      "1",
      "--mutants",
      "2",
      "--no-write",
      "-j",
      "1",
    ]);
    expect(r.exitCode).toBe(1);
    expect(out.tasks.map((t) => [t.task_id, t.ok])).toEqual([
      ["bad-manifest", false],
      ["leaked-allowed", true],
    ]);
    expect(out.problems?.length).toBe(3);
  });

  it("human output names the failing step and the reason; nothing on stderr off a TTY", async () => {
    const r = await runCli(["verify", join(BROKEN, "bad-manifest"), "--no-write"]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain("✗ bad-manifest — failed at manifest: 3 problem(s)");
    expect(r.stdout).toContain("/targets/0/mode: must be one of");
    expect(r.stdout).toContain("0/1 tasks verified");
    expect(r.stderr).toBe("");
  });

  it("unreadable task.json is bad input (exit 2), with the error as JSON", async () => {
    const root = await makeTempDir("verify-badjson");
    await writeFile(join(root, "task.json"), '{ "id": "x", }\n');
    const r = await runCli(["verify", root, "--json"]);
    expect(r.exitCode).toBe(2);
    const out = jsonEnvelope(r.stdout);
    expect(out).toMatchObject({ ok: false, command: "verify", error: { code: "manifest/bad-json", kind: "input" } });
    expect(out.data).toBeUndefined();
  });

  it("a missing interpreter is an infrastructure failure (exit 3), not a verdict on the task", async () => {
    const { r, out } = await verifyJson([join(BROKEN, "leaked-allowed"), "--python", "/nonexistent/python3", "--no-write"]);
    expect(r.exitCode).toBe(3);
    expect(out.tasks[0]!.failure).toMatchObject({ step: "reference", kind: "infra" });
    expect(out.tasks[0]!.failure!.reason).toContain("/nonexistent/python3");
  });

  it("bad flags are usage errors (exit 2)", async () => {
    for (const args of [
      ["--runs", "0"],
      ["--mutants", "-1"],
      ["--min-kill-ratio", "1.5"],
      ["--sandbox", "podman"],
      ["-j", "0"],
    ]) {
      const r = await runCli(["verify", join(BROKEN, "bad-manifest"), ...args]);
      expect(r.exitCode, args.join(" ")).toBe(2);
    }
  });
});

describe("verification.json, unchanged tasks and re-verification (pref-loss copy)", () => {
  const FLAGS = ["--runs", "2", "--mutants", "4", "--min-kill-ratio", "0.5"];
  let taskDir: string;
  let first: VerificationRecord;

  beforeAll(async () => {
    taskDir = await copyTask(await makeTempDir("verify-write"), "pref-loss");
  });

  const readRecord = async (): Promise<VerificationRecord> => JSON.parse(await readFile(join(taskDir, "verification.json"), "utf8")) as VerificationRecord;

  it("writes verification.json whose hashes match the task files", async () => {
    const { r, out } = await verifyJson([taskDir, ...FLAGS]);
    expect(r.exitCode).toBe(0);
    first = await readRecord();
    expect(schemaErrors(schemas.record, first)).toEqual([]);
    const { unchanged, ...printed } = out.tasks[0]!;
    expect(unchanged).toBe(false);
    expect(printed).toEqual(first);
    expect(first.ok).toBe(true);
    expect(first.inputs.task).toBe(await hashTaskInputs(await loadTask(taskDir)));
    expect(first.inputs.upstream.tree).toMatch(/^[0-9a-f]{64}$/); // local upstream without a commit
    for (const h of [first.inputs.workspace, first.inputs.reference, first.inputs.grader]) expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(first.settings).toEqual({ runs: 2, mutants: 4, min_kill_ratio: 0.5, min_alternatives: 2, seed: 1 });
    expect(first.steps.alternatives.alternatives.length).toBeGreaterThanOrEqual(2);
    expect(first.environment.python?.version).toMatch(/^3\.\d+/);
    // a docker record pins its packages by the image id; a host record lists their versions
    if (first.environment.backend === "docker") expect(first.environment.image?.id).toBeTruthy();
    else expect(first.environment.packages.pytest).toMatch(/^\d+\./);
    expect(["docker", "bwrap", "local"]).toContain(first.environment.backend);
    expect(first.steps.reference.runs).toHaveLength(2);
    expect(first.steps.stub.failing_every_run?.length).toBeGreaterThan(0);
    expect(first.timings.total_s).toBeGreaterThan(0);
  });

  it("skips a second verify of the same inputs as unchanged, and --force re-runs it", async () => {
    const again = await verifyJson([taskDir, ...FLAGS]);
    expect(again.r.exitCode).toBe(0);
    expect(again.out.tasks[0]!.unchanged).toBe(true);
    expect(again.out.tasks[0]!.verified_at).toBe(first.verified_at);

    const human = await runCli(["verify", taskDir, ...FLAGS]);
    expect(human.stdout).toContain("✓ pref-loss (unchanged since last verification)");

    const forced = await verifyJson([taskDir, ...FLAGS, "--force"]);
    expect(forced.out.tasks[0]!.unchanged).toBe(false);
    expect(forced.out.tasks[0]!.verified_at).not.toBe(first.verified_at);
    expect((await readRecord()).verified_at).toBe(forced.out.tasks[0]!.verified_at);
  });

  it("re-verifies when a test file, the settings or the local upstream change", async () => {
    await appendFile(join(taskDir, "tests", "test_preference_loss.py"), "\n# edited\n");
    const edited = await verifyJson([taskDir, ...FLAGS]);
    expect(edited.out.tasks[0]!.unchanged).toBe(false);
    expect(edited.out.tasks[0]!.inputs.task).not.toBe(first.inputs.task);
    expect(edited.out.tasks[0]!.inputs.task).toBe(await hashTaskInputs(await loadTask(taskDir)));

    const otherSettings = await verifyJson([taskDir, "--runs", "1", "--mutants", "4", "--min-kill-ratio", "0.5"]);
    expect(otherSettings.out.tasks[0]!.unchanged).toBe(false);

    await appendFile(join(taskDir, "..", "..", "upstreams", "pref-trainer", "utils.py"), "\n# edited upstream\n");
    const upstream = await verifyJson([taskDir, "--runs", "1", "--mutants", "4", "--min-kill-ratio", "0.5"]);
    expect(upstream.out.tasks[0]!.unchanged).toBe(false);
    expect(upstream.out.tasks[0]!.inputs.upstream.tree).not.toBe(otherSettings.out.tasks[0]!.inputs.upstream.tree);
  });

  it("--no-write leaves verification.json alone", async () => {
    const before = await readFile(join(taskDir, "verification.json"), "utf8");
    const r = await verifyJson([taskDir, "--runs", "1", "--mutants", "0", "--no-write"]);
    expect(r.out.tasks[0]!.steps.mutants).toMatchObject({ ok: true, skipped: true });
    expect(await readFile(join(taskDir, "verification.json"), "utf8")).toBe(before);
  });
});

describe("progress", () => {
  const hasScript = execa("script", ["--version"], { reject: false }).then((r) => r.exitCode === 0);

  it("shows task, step, run i/N and mutant i/K on stderr when it is a terminal", async (ctx) => {
    if (!(await hasScript)) ctx.skip();
    const taskDir = await copyTask(await makeTempDir("verify-tty"), "pref-loss");
    // util-linux `script` gives the command a pseudo-terminal
    const cmd = `node ${CLI} verify ${taskDir} --runs 2 --mutants 3 --min-kill-ratio 0.5 --no-write -j 1`;
    const r = await execa("script", ["-qec", cmd, "/dev/null"], { cwd: REPO_ROOT, env: { NO_COLOR: "1" }, reject: false });
    expect(r.exitCode).toBe(0);
    const text = String(r.stdout);
    expect(text).toContain("[0/1 done] pref-loss reference");
    expect(text).toContain("reference run 2/2 passed");
    expect(text).toContain("stub run 2/2 failed");
    expect(text).toMatch(/mutant 3\/3 (killed|survived)/);
    expect(text).toContain("✓ pref-loss");
  });

  it("verifies tasks side by side, shows each one in flight, and reports them in the order given", async (ctx) => {
    if (!(await hasScript)) ctx.skip();
    const tasks = ["weak-tests", "leaked-allowed", "stub-passes"].map((t) => join(BROKEN, t));
    const cmd = `node ${CLI} verify ${tasks.join(" ")} --runs 1 --mutants 2 --no-write -j 2 --tasks-at-once 2`;
    const r = await execa("script", ["-qec", cmd, "/dev/null"], { cwd: REPO_ROOT, env: { NO_COLOR: "1" }, reject: false });
    const text = String(r.stdout);
    // the first two run side by side: one progress line shows both
    expect(text).toMatch(/\[0\/3 done\] (weak-tests|leaked-allowed) [^|\r]* \| (weak-tests|leaked-allowed) \w+/);
    const order = [...text.matchAll(/[✓✗] ([a-z-]+) —/g)].map((m) => m[1]);
    expect(order).toEqual(["weak-tests", "leaked-allowed", "stub-passes"]);
    expect(text).toContain("2/3 tasks verified");
  });
});
