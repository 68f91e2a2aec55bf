import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashTree } from "../../src/core/hash.js";
import { probeBwrap, resolvePython, runTests, type PythonEnv, type RunOutcome, type RunRequest, type SandboxChoice } from "../../src/runner/index.js";

const FIX = resolve(fileURLToPath(new URL(".", import.meta.url)), "../fixtures/runner");
const GRADER = join(FIX, "grader");
const tree = (name: string): string => join(FIX, "trees", name);

const bwrap = await probeBwrap();
if (!bwrap.ok) console.warn(`[runner tests] bwrap backend tests skipped: ${bwrap.reason}`);

let python: PythonEnv;
let work: string;
let server: net.Server;
let port = 0;

beforeAll(async () => {
  python = await resolvePython({});
  work = await mkdtemp(join(tmpdir(), "lmr-runner-test-"));
  server = net.createServer((s) => s.end());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  server?.close();
  if (work) await rm(work, { recursive: true, force: true });
  await rm("/tmp/lmr-forged-junit.xml", { force: true });
});

function run(sandbox: SandboxChoice, t: string, extra: Partial<RunRequest> = {}): Promise<RunOutcome> {
  return runTests({ tree: t, grader: GRADER, python, sandbox, timeoutTotalS: 20, ...extra });
}

/** A writable copy of a fixture tree, for cases that need files written at test time. */
async function copyOf(name: string): Promise<string> {
  const dst = await mkdtemp(join(work, `${name}-`));
  await cp(tree(name), dst, { recursive: true });
  return dst;
}

function leftoverSleepers(): string[] {
  try {
    return execFileSync("pgrep", ["-f", "sleep 61.2345"], { encoding: "utf8" }).split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

const backends: { sandbox: SandboxChoice; name: "local" | "bwrap"; skip: boolean }[] = [
  { sandbox: "none", name: "local", skip: false },
  { sandbox: "bwrap", name: "bwrap", skip: !bwrap.ok },
];

describe.each(backends)("runTests on the $name backend", ({ sandbox, name, skip }) => {
  it.skipIf(skip)("passes a correct tree and reports each test, the JUnit XML and the isolation", async () => {
    const before = await hashTree(tree("good"));
    const o = await run(sandbox, tree("good"));
    expect(o.status, o.log).toBe("passed");
    expect(o.backend).toBe(name);
    expect(o.exit_code).toBe(0);
    expect(o.counts).toEqual({ passed: 2, failed: 0, errors: 0, skipped: 0 });
    expect(o.tests.map((t) => t.id).sort()).toEqual(["lmr_tests/tests/test_calc.py::test_add_is_symmetric", "lmr_tests/tests/test_calc.py::test_add_pairs"]);
    expect(o.junit_xml).toMatch(/<testsuite[^>]*tests="2"/);
    expect(o.python.version).toBe(python.version);
    expect(o.isolation?.network).toBe(name === "bwrap" ? "off" : "on");
    expect(o.isolation?.filesystem).toBe(name === "bwrap" ? "minimal" : "none");
    expect(await hashTree(tree("good"))).toEqual(before);
  });

  it.skipIf(skip)("fails a wrong tree", async () => {
    const o = await run(sandbox, tree("wrong"));
    expect(o.status).toBe("failed");
    expect(o.counts.failed).toBe(2);
    expect(o.tests[0]?.message).toMatch(/assert/);
  });

  it.skipIf(skip)("calls an import error or a syntax error an error, not a failure", async () => {
    const imp = await run(sandbox, tree("import-error"));
    expect(imp.status).toBe("error");
    expect(imp.reason).toMatch(/lmr_no_such_module_xyz/);
    const syn = await run(sandbox, tree("syntax-error"));
    expect(syn.status).toBe("error");
    expect(syn.reason).toMatch(/SyntaxError/);
  });

  it.skipIf(skip)("stops an endless loop with the per-test alarm (test fails, run goes on)", async () => {
    const o = await run(sandbox, tree("loop"), { timeoutPerTestS: 1 });
    expect(o.status).toBe("failed");
    expect(o.counts.failed).toBe(2);
    expect(o.tests[0]?.message).toMatch(/per-test limit of 1 s/);
  });

  it.skipIf(skip)("kills the process group at the wall limit", async () => {
    const t0 = Date.now();
    const o = await run(sandbox, tree("loop"), { timeoutTotalS: 3 });
    expect(o.status).toBe("timeout");
    expect(o.reason).toMatch(/wall limit of 3 s/);
    expect(Date.now() - t0).toBeLessThan(8000);
  });

  it.skipIf(skip)("a target that ignores the per-test alarm cannot hold the tests: the alarm is the oracle's", async () => {
    const o = await run(sandbox, tree("stubborn-loop"), { timeoutPerTestS: 1 });
    expect(o.status).toBe("failed");
    expect(o.tests.map((t) => t.message)).toEqual(["lmr: test exceeded the per-test limit of 1 s", "lmr: test exceeded the per-test limit of 1 s"]);
  });

  it.skipIf(skip)("caps memory: a memory bomb gets MemoryError", async () => {
    const o = await run(sandbox, tree("memory-bomb"), { memoryMb: 512 });
    expect(o.status).toBe("failed");
    expect(o.tests[0]?.message).toMatch(/MemoryError/);
    expect(o.isolation?.memory_mb).toBe(512);
  });

  it.skipIf(skip)("ignores a printed summary and os._exit(0) at import: only the candidate ends", async () => {
    const o = await run(sandbox, tree("print-exit"));
    expect(o.status).toBe("failed");
    expect(o.counts).toEqual({ passed: 0, failed: 2, errors: 0, skipped: 0 });
    expect(o.tests[0]?.message).toMatch(/CandidateError: the candidate process ended while it ran calc:add/);
  });

  it.skipIf(skip)("ignores JUnit files forged in the tree and in /tmp", async () => {
    await rm("/tmp/lmr-forged-junit.xml", { force: true });
    const o = await run(sandbox, tree("forge-junit"));
    expect(o.status).toBe("failed");
    expect(o.junit_xml).toMatch(/failures="2"/);
    // Locally the forgery lands in the real /tmp (and is ignored); bwrap's /tmp is private.
    expect(existsSync("/tmp/lmr-forged-junit.xml")).toBe(name === "local");
    await rm("/tmp/lmr-forged-junit.xml", { force: true });
  });

  it.skipIf(skip)("drops the tree's conftest.py, pytest.ini, sitecustomize and .pth; ignores pyproject/setup.cfg/tox.ini", async () => {
    const o = await run(sandbox, tree("conftest-hijack"), { keepDir: true });
    try {
      expect(o.status, o.log).toBe("failed");
      expect(o.log).toMatch(/removed from the tree copy: conftest.py, evil.pth, lmr_tests\/tests\/conftest.py, pytest.ini, sitecustomize.py/);
      // The tree's own lmr_tests/ was replaced by the grader.
      expect(o.tests.map((t) => t.id)).not.toContain("lmr_tests/tests/test_calc.py::test_forged");
      const kept = o.scratch_dir!;
      expect(existsSync(join(kept, "tree", "conftest.py"))).toBe(false);
      expect(existsSync(join(kept, "tree", "pyproject.toml"))).toBe(true);
      // the grader is the oracle's alone; the tree's own lmr_tests/ is not what pytest ran
      expect(await readFile(join(kept, "oracle", "lmr_tests", "tests", "conftest.py"), "utf8")).toMatch(/def pairs/);
    } finally {
      await rm(o.scratch_dir!, { recursive: true, force: true });
    }
  });

  it.skipIf(skip)("code that patches pytest's reports patches the candidate's pytest, not the oracle's", async () => {
    const o = await run(sandbox, tree("patch-pytest"));
    expect(o.status).toBe("failed");
    expect(o.tests[0]?.message).toMatch(/assert -1 == 5/);
  });

  it.skipIf(skip)("records written to every descriptor reach no results channel (the candidate holds none)", async () => {
    const o = await run(sandbox, tree("forge-records"));
    expect(o.status).toBe("failed");
    expect(o.tests[0]?.message).toMatch(/not a bridge frame/);
  });

  it.skipIf(skip)("does not let the code under test skip the grader's tests", async () => {
    const o = await run(sandbox, tree("skip-from-body"));
    expect(o.status).toBe("failed");
    expect(o.counts.skipped).toBe(0);
    expect(o.tests[0]?.message).toMatch(/RemoteError: .*Skipped: not today/);
  });

  it.skipIf(skip)(`network to 127.0.0.1 is ${name === "bwrap" ? "cut" : "open (local backend)"}`, async () => {
    const t = await copyOf("network");
    await writeFile(join(t, "port.txt"), String(port));
    const o = await run(sandbox, t);
    expect(o.status).toBe(name === "bwrap" ? "failed" : "passed");
    const open = await run(sandbox, t, { network: true });
    expect(open.status).toBe("passed");
  });

  it.skipIf(skip)("caps the number of processes and leaves none behind", async (ctx) => {
    const o = await run(sandbox, tree("fork-many"), { maxProcs: 40 });
    if (o.isolation?.pids === "none") {
      ctx.skip();
      return;
    }
    expect(o.status).toBe("failed");
    expect(o.tests[0]?.message).toMatch(/Resource temporarily unavailable|BlockingIOError/);
    expect(leftoverSleepers()).toEqual([]);
  });

  it.skipIf(skip)("the grader's files are not in the candidate's tree to rewrite", async () => {
    const o = await run(sandbox, tree("rewrite-grader"));
    expect(o.status).toBe("failed");
    expect(o.counts.failed).toBe(2);
    expect(o.tests[0]?.message).toMatch(/assert -1 == 5/);
  });

  it.skipIf(skip)(`hidePaths ${name === "bwrap" ? "hides" : "cannot hide"} folders from the code under test`, async () => {
    const secretDir = await mkdtemp(join(work, "task-"));
    await writeFile(join(secretDir, "reference.py"), "SECRET = 1\n");
    const t = await copyOf("peek");
    await writeFile(join(t, "peek.txt"), join(secretDir, "reference.py"));
    // /tmp is private under bwrap anyway; hide a folder outside it too.
    const o = await run(sandbox, t, { hidePaths: [secretDir] });
    expect(o.status).toBe(name === "bwrap" ? "failed" : "passed");
  });

  it.skipIf(skip)("warms the targets' modules without shadowing the names the tests import them by", async () => {
    // calc/calc.py guessed as calc.calc from its path; the test imports it as calc, with calc/
    // first on the path: the warm-up's namespace package calc must not be what it gets (nor
    // may dropping it break on calc.inner, a namespace package whose path comes from calc's)
    const o = await runTests({
      tree: tree("nested-package"),
      grader: join(FIX, "grader-inner-path"),
      python,
      sandbox,
      timeoutTotalS: 20,
      warmModules: ["calc.calc", "calc.inner.deep"],
    });
    expect(o.status, o.log).toBe("passed");
  });

  it.skipIf(skip)("runs only the selected test paths", async () => {
    const o = await run(sandbox, tree("good"), { testPaths: ["tests/test_calc.py::test_add_is_symmetric"] });
    expect(o.status).toBe("passed");
    expect(o.tests.map((t) => t.id)).toEqual(["lmr_tests/tests/test_calc.py::test_add_is_symmetric"]);
  });
});

describe("runTests outside the sandbox choice", () => {
  it("reports a missing interpreter as infra", async () => {
    const o = await runTests({ tree: tree("good"), grader: GRADER, python: { path: "/nonexistent/python3", version: "3.11" }, timeoutTotalS: 5 });
    expect(o.status).toBe("infra");
    expect(o.reason).toMatch(/\/nonexistent\/python3/);
  });

  it("rejects a bad request as a usage error", async () => {
    await expect(runTests({ tree: tree("good"), grader: GRADER, python, timeoutTotalS: 0 })).rejects.toMatchObject({ code: "run/bad-request" });
    await expect(runTests({ tree: tree("good"), grader: GRADER, python, timeoutTotalS: 5, mount: "../x" })).rejects.toMatchObject({ code: "run/bad-mount" });
    await expect(runTests({ tree: join(FIX, "nope"), grader: GRADER, python, timeoutTotalS: 5 })).rejects.toMatchObject({ code: "run/no-dir" });
  });

  it("auto picks bwrap when it works and removes its scratch folder", async () => {
    const o = await runTests({ tree: tree("good"), grader: GRADER, python, timeoutTotalS: 20 });
    expect(o.backend).toBe(bwrap.ok ? "bwrap" : "local");
    expect(o.scratch_dir).toBeUndefined();
    const kept = await runTests({ tree: tree("good"), grader: GRADER, python, timeoutTotalS: 20, keepDir: true });
    expect((await stat(join(kept.scratch_dir!, "tree", "calc.py"))).isFile()).toBe(true);
    await rm(kept.scratch_dir!, { recursive: true, force: true });
  });
});
