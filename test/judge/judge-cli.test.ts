import { readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JudgeSummary } from "../../src/judge/run-judge.js";
import { copyFixtureRun } from "../report/helpers.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { startScriptedServer, type ScriptedServer } from "../generate/scripted-server.js";

const ENV = { LMR_TEST_API_KEY: "sk-unused-3b7d" };
const exists = (p: string): Promise<boolean> =>
  stat(p).then(
    () => true,
    () => false,
  );

describe("lmr judge: bad input and run folders it cannot judge", () => {
  let server: ScriptedServer;
  let run: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    server = await startScriptedServer(() => ({ kind: "status", status: 500 }));
    run = await copyFixtureRun();
  });
  afterAll(async () => {
    await server.close();
    await run.cleanup();
  });
  const judge = (dir: string, ...extra: string[]) =>
    runCli(["judge", dir, "--base-url", server.baseUrl, "--model", "j", "--api-key-env", "LMR_TEST_API_KEY", ...extra], { env: ENV });

  it("refuses bad flags and a folder that is not a run: exit 2, the flag or file named, no request", async () => {
    const cases: [string, string[], Record<string, string>, RegExp][] = [
      [run.dir, ["-n", "0"], ENV, /--samples: --samples must be a whole number >= 1, got '0'/],
      [run.dir, ["--parse-retries", "x"], ENV, /--parse-retries: --parse-retries must be a whole number >= 0/],
      [run.dir, ["--api-key-env", "LMR_TEST_NO_SUCH"], {}, /--api-key-env: the environment variable LMR_TEST_NO_SUCH is not set/],
      [join(run.dir, "results"), [], ENV, /run\.json: not a run folder: run\.json is missing/],
    ];
    // independent runs, side by side
    const [noModel] = await Promise.all([
      runCli(["judge", run.dir, "--base-url", server.baseUrl], { env: ENV }),
      ...cases.map(async ([dir, flags, env, message]) => {
        const r = await runCli(["judge", dir, "--base-url", server.baseUrl, "--model", "j", "--api-key-env", "LMR_TEST_API_KEY", ...flags], { env });
        expect(r.exitCode, r.stderr).toBe(2);
        expect(r.stderr).toMatch(message);
        return r;
      }),
    ]);
    expect(noModel!.exitCode).toBe(2);
    expect(noModel!.stderr).toMatch(/--model: --model is required/);
    expect(server.requests).toHaveLength(0);
  });

  it("a run graded before submission.diff was kept: every sample with code is named, none dropped, exit 3; invalid ones get a no-code judge.json", async () => {
    const r = await judge(run.dir, "--json");
    expect(r.exitCode, r.stderr).toBe(3);
    const s = jsonData(r.stdout) as JudgeSummary;
    // 7 readable results: 1 infra (not judged), 1 invalid (no code), 5 with code but no diff
    expect(s.totals).toMatchObject({ samples: 7, not_graded: 1, no_code: 1, unjudgeable: 5, judged: 0, requests: 0 });
    expect(s.complete).toBe(false);
    expect(
      r.stderr.match(/no submission\.diff: graded by an lmr that did not keep the applied submission \(hint: run lmr eval on this run folder again/g),
    ).toHaveLength(5);
    expect(server.requests).toHaveLength(0);
    const invalid = s.samples.find((x) => x.status === "no-code")!;
    const j = JSON.parse(await readFile(join(run.dir, "results", "example-model-1", invalid.task_id, invalid.sample, "judge.json"), "utf8"));
    expect(j).toMatchObject({ status: "no-code", judge_model: "j", majority: null });
    expect(await exists(join(run.dir, "judge-responses"))).toBe(false);
    expect(await exists(join(run.dir, ".lock"))).toBe(false);
  });

  it("waits its turn: a run folder a live lmr eval is grading into is refused, exit 2, nothing judged", async () => {
    const lock = join(run.dir, ".lock");
    await writeFile(lock, JSON.stringify({ pid: process.pid, start: "", started_at: "now" }));
    try {
      const r = await judge(run.dir);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`another lmr eval \\(pid ${process.pid}, started now\\) is grading into this run folder`));
      expect(server.requests).toHaveLength(0);
    } finally {
      await rm(lock, { force: true });
    }
  });
});
