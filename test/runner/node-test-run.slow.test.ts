import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeDocker } from "../../src/env/index.js";
import { nodeRuntime, runTests, type RunOutcome, type RunRequest } from "../../src/runner/index.js";

/**
 * node:test graders through the real runner (node/lmr-harness under bwrap): the tests run in the
 * oracle, the tree in a candidate process of its own (@lmr/bridge); the verdict comes from the
 * oracle's signed channel only, and the usual tricks of code under test never pass.
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
    'import { candidate } from "@lmr/bridge";',
    'const add = candidate.function("src/add.ts", "add");',
    'test("small", async () => { assert.equal(await add(1, 2), 3); });',
    'describe("signs", () => {',
    '  test("negative", async () => { assert.equal(await add(1, -4), -3); });',
    "});",
  ].join("\n"),
};

const add = (body: string, extra = ""): Record<string, string> => ({
  "src/add.ts": `${extra}\nexport function add(a: number, b: number): number {\n${body}\n}\n`,
});

async function run(tree: Record<string, string>, extra: Partial<RunRequest> = {}, grader: Record<string, string> = GRADER): Promise<RunOutcome> {
  return runTests({
    tree: await folder(tree),
    grader: await folder(grader),
    python: nodeRuntime(),
    testRunner: "node-test",
    sandbox: "bwrap",
    timeoutTotalS: 30,
    timeoutPerTestS: 2,
    ...extra,
  });
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

  it("a test past the per-test limit fails by its own timeout, a busy loop in the target too (the loop is the candidate's)", async () => {
    const slow = await run(
      add("  return a + b;"),
      {},
      { ...GRADER, "slow.test.ts": 'import { test } from "node:test";\ntest("sleeps", () => new Promise((r) => setTimeout(r, 5000)));\n' },
    );
    expect(slow.status).toBe("failed");
    expect(slow.tests.find((t) => t.id === "lmr_tests/slow.test.ts::sleeps")?.message).toMatch(/timed out after 2000ms/);
    const spin = await run(add("  for (;;) {}"), { timeoutPerTestS: 1 });
    expect(spin.status).toBe("failed");
    expect(spin.counts.passed).toBe(0);
    expect(spin.tests.find((t) => t.id === "lmr_tests/add.test.ts::small")?.message).toMatch(/timed out after 1000ms/);
  });

  it("a test file that does not import is a collection error", async () => {
    const o = await run(add("  return a + b;"), {}, { ...GRADER, "broken.test.ts": 'import { nothing } from "../src/missing.js";\nnothing();\n' });
    expect(o.status).toBe("error");
    expect(o.reason).toMatch(/collection failed in 1 place\(s\), first lmr_tests\/broken.test.ts/);
  });

  it("process.exit(0) in the target, a forged record and a rebound test API never pass", async () => {
    const exit = await run(add("  process.exit(0);"));
    expect(exit.status).toBe("failed");
    expect(exit.counts.passed).toBe(0);
    const forged = await run(
      add(
        "  return 0;",
        'import { writeSync } from "node:fs";\nfor (let fd = 3; fd < 12; fd++) { try { writeSync(fd, `${"0".repeat(64)} {"t":"done","exit":0,"n_results":2,"tampered":[],"seq":1}\\n`); } catch {} }',
      ),
    );
    expect(forged.status).not.toBe("passed");
    expect(forged.counts.passed).toBe(0);
    // node:test rebound where the target runs: the candidate's, where no test runs; the oracle's tests still decide
    const rebound = await run(
      add(
        "  return 0;",
        'import test from "node:test";\nimport { createRequire } from "node:module";\nconst nt = createRequire(import.meta.url)("node:test");\nnt.it = nt.test = () => {};',
      ),
    );
    expect(rebound.status).toBe("failed");
    expect(rebound.counts).toEqual({ passed: 0, failed: 2, errors: 0, skipped: 0 });
  });

  it("an inspector session in the target sees only the candidate, which holds no results key: answers still decide", async () => {
    // the key goes to the oracle's stdin; an in-process inspector could read the oracle's closures, and there the preload refuses it
    const open =
      'import { Session } from "node:inspector";\nconst s = new Session();\ns.connect();\ns.post("Runtime.evaluate", { expression: "Object.keys(globalThis).length" });\n';
    const right = await run(add("  return a + b;", open));
    expect(right.status, right.log).toBe("passed");
    const wrong = await run(add("  return a - b;", open));
    expect(wrong.status).toBe("failed");
    expect(wrong.counts.passed).toBe(0);
  });

  it("under docker needs the task's node-test image: a base without Node is infra naming the field and the fix", async () => {
    // (runs in the task's image are tested in test/runner/node-docker.docker.ts)
    const o = await run(add("  return a + b;"), {
      sandbox: "docker",
      environment: { python: "3.12", base: "python:3.12-slim", requirements: [], gpu: false, network: false },
    });
    expect(o.status).toBe("infra");
    expect(o.backend).toBe("docker");
    const daemon = await probeDocker();
    if (daemon.ok)
      expect(o.reason).toMatch(
        /^environment\.base: tests\.runner is "node-test", and the base "python:3\.12-slim" has no Node lmr installs; use "debian:bookworm"/,
      );
    else expect(o.reason).toBe(daemon.reason);
  });
});
