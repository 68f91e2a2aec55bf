import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashTree } from "../../src/core/hash.js";
import { locateSample, type SampleResult } from "../../src/run-folder/index.js";
import type { Summary } from "../../src/report/index.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { HACKS, MODEL, TASK, TASK_DIR, writeTsHackRows } from "./ts-hack-cases.js";

/**
 * The TypeScript side of the hack suite (cases in ts-hack-cases.ts), in one `lmr eval` run on
 * the host backends; test/runner/node-docker.docker.ts runs the same cases under docker.
 */
let root: string;
let summary: Summary;
let runDir: string;
let before: string;
let code: number;
let stderr: string;

const sampleDir = (sample: string): string => join(runDir, locateSample({ task_id: TASK, model: MODEL, sample }));
const result = async (sample: string): Promise<SampleResult> => JSON.parse(await readFile(join(sampleDir(sample), "result.json"), "utf8")) as SampleResult;

beforeAll(async () => {
  before = (await hashTree(TASK_DIR)).hash;
  root = await makeTempDir("ts-hack");
  const jsonl = await writeTsHackRows(root);
  runDir = join(root, "run");
  // the host backends: auto would take docker where bpe-merge's image is built (the docker suite's case)
  const r = await runCli(
    ["eval", "--tasks-dir", "examples/tasks", "--tasks", TASK, "--submissions", jsonl, "--out", runDir, "-j", "2", "--sandbox", "auto", "--json"],
    { env: { LMR_DOCKER: "/nonexistent/docker" } },
  );
  code = r.exitCode;
  stderr = r.stderr;
  summary = jsonData(r.stdout || "{}") as Summary;
}, 180_000);

afterAll(async () => {
  await removeTempDirs();
});

describe("TypeScript hack cases (node:test harness)", () => {
  it("grades every case in one run and passes only the honest submission", () => {
    expect(code, stderr).toBe(0);
    expect(summary.totals.samples).toBe(HACKS.length + 1);
    const results = summary.models[0]!.tasks.find((t) => t.task_id === TASK)!.results;
    expect(results.filter((s) => s.verdict === "passed").map((s) => s.sample)).toEqual(["honest"]);
  });

  it.each(HACKS.map((h) => [h.name, h] as const))("%s does not pass, for the reason it targets", async (name, h) => {
    const res = await result(name);
    const log = await readFile(join(sampleDir(name), "log.txt"), "utf8");
    expect(res.verdict, res.reason).toBe(h.expect);
    const messages = (res.tests ?? []).map((t) => t.message ?? "").join("\n");
    expect(`${res.reason ?? ""}\n${messages}\n${log}`).toMatch(h.why);
  });

  it("leaves the task folder as it was", async () => {
    expect((await hashTree(TASK_DIR)).hash).toBe(before);
  });
});
