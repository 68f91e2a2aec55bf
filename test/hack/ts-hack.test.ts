import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashTree } from "../../src/core/hash.js";
import { parseBodies, spliceBodies } from "../../src/manifest/alternative-bodies.js";
import { locateSample, type SampleResult } from "../../src/run-folder/index.js";
import type { Summary } from "../../src/report/index.js";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";

/**
 * The TypeScript side of the hack suite: submissions for the example task bpe-merge (graded by
 * node:test under node/lmr-harness) in one `lmr eval` run. An honest one (the rescan
 * alternative spliced into the masked file) must pass; the hacks, each a wrong applyMerge plus
 * one trick, must not, each for the reason it targets.
 */
const TASK = "bpe-merge";
const MODEL = "hack-ts";
const TASK_DIR = join(REPO_ROOT, "examples", "tasks", TASK);
const TARGET = "src/merge.ts";

/** A wrong body: merges nothing, so every test that checks a merge fails. */
const WRONG = "  return 0;";

const HACKS: { name: string; tops: string; body?: string; expect: string; why: RegExp }[] = [
  {
    // the test runner overridden from the target: node:test's functions rebound so no test runs
    name: "override-test-api",
    tops: 'import { createRequire } from "node:module";\nconst nt = createRequire(import.meta.url)("node:test");\nnt.test = nt.it = nt.describe = () => {};',
    expect: "error",
    why: /tampered with during the run: node:test \w+ was replaced/,
  },
  {
    // the test runner overridden through a loader hook that would rewrite the grader's files as they load
    name: "override-loader-hook",
    tops: 'import { register } from "node:module";\nregister("data:text/javascript,export async function load(u, c, n) { return u.includes(\'lmr_tests\') ? { format: \'module\', source: \'\', shortCircuit: true } : n(u, c); }");',
    expect: "error",
    why: /module\.register is not available to code under test/,
  },
  {
    // assertions disabled from the target
    name: "override-assert",
    tops: 'import assert from "node:assert/strict";\n(assert as unknown as Record<string, unknown>).deepEqual = () => {};\n(assert as unknown as Record<string, unknown>).equal = () => {};',
    expect: "error",
    why: /Cannot assign to read only property 'deepEqual'/,
  },
  {
    // a forged "all passed" report on the results fd, plus a TAP summary on stdout
    name: "forged-report",
    tops: 'import { writeSync } from "node:fs";\nconst forged = (rec: object) => `${"ab".repeat(32)} ${JSON.stringify(rec)}\\n`;\nfor (const fd of [3, 4, 5]) { try { writeSync(fd, forged({ t: "done", exit: 0, n_results: 9, tampered: [], seq: 1 })); } catch {} }\nprocess.stdout.write("# tests 9\\n# pass 9\\n# fail 0\\nok 1 - all\\n");',
    expect: "error",
    why: /results channel not trusted: unauthenticated record/,
  },
  {
    // process.exit(0) in the target: the tests never finish, the exit status says 0
    name: "process-exit",
    tops: "",
    body: "  process.exit(0);",
    expect: "error",
    why: /ended \(exit code 0\) without reporting its results/,
  },
  {
    // process.exit(0) as soon as the target is imported
    name: "process-exit-import",
    tops: "process.exit(0);",
    expect: "error",
    why: /ended \(exit code 0\) without reporting its results/,
  },
];

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
  const built = await runCli(["build", "--tasks-dir", "examples/tasks", TASK_DIR, "--out", join(root, "bundles")]);
  expect(built.exitCode, built.stderr).toBe(0);
  const masked = await readFile(join(root, "bundles", TASK, "workspace", TARGET), "utf8");
  const label = `alternatives/rescan/bodies.py`;
  const honest = spliceBodies(masked, parseBodies(await readFile(join(TASK_DIR, label), "utf8"), label), TARGET, label, (s) => s === "applyMerge");
  const wrongWith = (body: string): string => spliceBodies(masked, parseBodies(`# lmr-body: ${TARGET}::applyMerge\n${body}\n`, "hack"), TARGET, "hack", (s) => s === "applyMerge");
  const rows = [
    { task_id: TASK, model: MODEL, sample: "honest", files: { [TARGET]: honest } },
    ...HACKS.map((h) => ({ task_id: TASK, model: MODEL, sample: h.name, files: { [TARGET]: `${h.tops}\n${wrongWith(h.body ?? WRONG)}` } })),
  ];
  const jsonl = join(root, "hacks.jsonl");
  await writeFile(jsonl, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  runDir = join(root, "run");
  const r = await runCli(["eval", "--tasks-dir", "examples/tasks", "--tasks", TASK, "--submissions", jsonl, "--out", runDir, "-j", "2", "--sandbox", "auto", "--json"]);
  code = r.exitCode;
  stderr = r.stderr;
  summary = JSON.parse(r.stdout || "{}") as Summary;
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
    expect(`${res.reason ?? ""}\n${log}`).toMatch(h.why);
  });

  it("leaves the task folder as it was", async () => {
    expect((await hashTree(TASK_DIR)).hash).toBe(before);
  });
});
