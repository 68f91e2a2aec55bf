import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeDocker } from "../../src/env/index.js";
import { nodeRuntime, runTests, type RunOutcome, type RunRequest } from "../../src/runner/index.js";

/**
 * node:test graders through the real runner (node/lmr-harness under bwrap): the verdict comes
 * from the signed channel only, and the usual tricks of code under test end in error, not pass.
 */
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "lmr-node-run-"));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

async function folder(files: Record<string, string>): Promise<string> {
  const dst = await mkdtemp(join(work, "f-"));
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(dst, rel)), { recursive: true });
    await writeFile(join(dst, rel), text);
  }
  return dst;
}

const GRADER = {
  "add.test.ts": [
    'import { test, describe } from "node:test";',
    'import assert from "node:assert/strict";',
    'import { add } from "../src/add.js";',
    'test("small", () => { assert.equal(add(1, 2), 3); });',
    'describe("signs", () => {',
    '  test("negative", () => { assert.equal(add(1, -4), -3); });',
    "});",
  ].join("\n"),
};

const add = (body: string, extra = ""): Record<string, string> => ({ "src/add.ts": `${extra}\nexport function add(a: number, b: number): number {\n${body}\n}\n` });

async function run(tree: Record<string, string>, extra: Partial<RunRequest> = {}, grader: Record<string, string> = GRADER): Promise<RunOutcome> {
  return runTests({ tree: await folder(tree), grader: await folder(grader), python: nodeRuntime(), testRunner: "node-test", sandbox: "bwrap", timeoutTotalS: 30, timeoutPerTestS: 2, ...extra });
}

describe("runTests with testRunner node-test", () => {
  it("passes a correct TypeScript tree, with ids <file>::<describe>::<test>", async () => {
    const o = await run(add("  return a + b;"));
    expect(o.status, `${o.reason}\n${o.log}`).toBe("passed");
    expect(o.backend).toBe("bwrap");
    expect(o.tests.map((t) => t.id).sort()).toEqual(["lmr_tests/add.test.ts::signs::negative", "lmr_tests/add.test.ts::small"]);
    expect(o.python.version).toMatch(/^node 20\./);
  });

  it("fails a wrong tree inside the test that catches it", async () => {
    const o = await run(add("  return a + Math.abs(b);"));
    expect(o.status).toBe("failed");
    expect(o.counts).toEqual({ passed: 1, failed: 1, errors: 0, skipped: 0 });
    expect(o.tests.find((t) => t.status === "failed")?.message).toMatch(/Expected values to be strictly equal/);
  });

  it("a test past the per-test limit fails by its own timeout; a busy loop gets the run killed", async () => {
    const slow = await run(add("  return a + b;"), {}, { ...GRADER, "slow.test.ts": 'import { test } from "node:test";\ntest("sleeps", () => new Promise((r) => setTimeout(r, 5000)));\n' });
    expect(slow.status).toBe("failed");
    expect(slow.tests.find((t) => t.id === "lmr_tests/slow.test.ts::sleeps")?.message).toMatch(/timed out after 2000ms/);
    const spin = await run(add("  for (;;) {}"), { timeoutPerTestS: 1 });
    expect(spin.status).toBe("timeout");
    expect(spin.reason).toMatch(/lmr_tests\/add.test.ts::small ran past the per-test limit of 1 s/);
  });

  it("a test file that does not import is a collection error", async () => {
    const o = await run(add("  return a + b;"), {}, { ...GRADER, "broken.test.ts": 'import { nothing } from "../src/missing.js";\nnothing();\n' });
    expect(o.status).toBe("error");
    expect(o.reason).toMatch(/collection failed in 1 place\(s\), first lmr_tests\/broken.test.ts/);
  });

  it("process.exit(0) in the target, a forged record and a rebound assert never pass", async () => {
    const exit = await run(add("  process.exit(0);"));
    expect(exit.status).toBe("error");
    expect(exit.reason).toMatch(/without reporting its results/);
    const forged = await run(add("  return 0;", 'import { writeSync } from "node:fs";\nwriteSync(3, `${"0".repeat(64)} {"t":"done","exit":0,"n_results":2,"tampered":[],"seq":1}\\n`);'));
    expect(forged.status).toBe("error");
    expect(forged.reason).toMatch(/unauthenticated record/);
    const rebound = await run(add("  return 0;", 'import test from "node:test";\nimport { createRequire } from "node:module";\nconst nt = createRequire(import.meta.url)("node:test");\nnt.it = nt.test = () => {};'));
    expect(rebound.status).toBe("error");
    expect(rebound.reason).toMatch(/tampered with.*node:test (test|it) was replaced/);
  });

  it("an inspector session (which could read the channel key) cannot be opened", async () => {
    const o = await run(add("  return a + b;", 'import { Session } from "node:inspector";\nimport { createRequire } from "node:module";\nconst mod = createRequire(import.meta.url)("node:inspector");\nfor (const S of [Session, mod.Session]) { try { new S().connect(); throw new Error("connected"); } catch (e) { if (String(e).includes("connected")) throw e; } }\nnew Session();'));
    expect(o.status).toBe("error");
    expect(o.reason).toMatch(/node:inspector is not available to code under test/);
  });

  it("under docker needs the task's node-test image: a base without Node is infra naming the field and the fix", async () => {
    // (runs in the task's image are tested in test/runner/node-docker.docker.ts)
    const o = await run(add("  return a + b;"), { sandbox: "docker", environment: { python: "3.12", base: "python:3.12-slim", requirements: [], gpu: false, network: false } });
    expect(o.status).toBe("infra");
    expect(o.backend).toBe("docker");
    const daemon = await probeDocker();
    if (daemon.ok) expect(o.reason).toMatch(/^environment\.base: tests\.runner is "node-test", and the base "python:3\.12-slim" has no Node lmr installs; use "debian:bookworm"/);
    else expect(o.reason).toBe(daemon.reason);
  });
});
