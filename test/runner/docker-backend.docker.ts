import { execa } from "execa";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashTree } from "../../src/core/hash.js";
import { envImageTag, normaliseEnvironment } from "../../src/env/index.js";
import {
  forgetDockerTargets,
  resolvePython,
  resolveRunPython,
  runPythonInImage,
  runTests,
  selectBackend,
  setBackendNotice,
  sweepStaleContainers,
  type PythonEnv,
  type RunOutcome,
  type RunRequest,
} from "../../src/runner/index.js";
import { PLAIN_ENV, lmrContainers, skipUnlessDocker } from "./docker-support.js";

/**
 * The docker backend against the runner fixtures: the same cases as the host
 * backends (test/runner/run-tests.slow.test.ts), plus what only a container gives:
 * a read-only root, a private /tmp, a non-root user, nothing of the host
 * visible, the results socket, and no container left on any path.
 */
const FIX = resolve(fileURLToPath(new URL(".", import.meta.url)), "../fixtures/runner");
const GRADER = join(FIX, "grader");
const tree = (name: string): string => join(FIX, "trees", name);
const ok = await skipUnlessDocker("docker backend");

let python: PythonEnv;
let work: string;

beforeAll(async () => {
  python = await resolvePython({});
  work = await mkdtemp(join(tmpdir(), "lmr-docker-test-"));
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

function run(t: string, extra: Partial<RunRequest> = {}): Promise<RunOutcome> {
  return runTests({ tree: t, grader: GRADER, python, sandbox: "docker", environment: PLAIN_ENV, timeoutTotalS: 20, ...extra });
}

async function treeWith(files: Record<string, string>): Promise<string> {
  const dst = await mkdtemp(join(work, "tree-"));
  for (const [rel, text] of Object.entries(files)) await writeFile(join(dst, rel), text);
  return dst;
}

describe.skipIf(!ok)("runTests on the docker backend", () => {
  it("passes a correct tree and records the backend, the image and what was enforced", async () => {
    const before = await hashTree(tree("good"));
    const o = await run(tree("good"));
    expect(o.status, o.log).toBe("passed");
    expect(o.backend).toBe("docker");
    expect(o.counts).toEqual({ passed: 2, failed: 0, errors: 0, skipped: 0 });
    expect(o.junit_xml).toMatch(/<testsuite[^>]*tests="2"/);
    expect(o.image).toEqual({ tag: await envImageTag(normaliseEnvironment(PLAIN_ENV)), id: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), digest: null });
    expect(o.python).toEqual({ path: "/opt/lmr/venv/bin/python", version: expect.stringMatching(/^3\.11\./) });
    expect(o.isolation).toMatchObject({ network: "off", filesystem: "minimal", memory_mb: 4096, pids: "cgroup", cpus: 1 });
    expect(o.isolation?.uid).not.toBe(0);
    expect(await hashTree(tree("good"))).toEqual(before);
  });

  it("fails a wrong tree and calls a syntax error an error", async () => {
    expect((await run(tree("wrong"))).status).toBe("failed");
    const syn = await run(tree("syntax-error"));
    expect(syn.status).toBe("error");
    expect(syn.reason).toMatch(/SyntaxError/);
  });

  it("calls an import of a module the image lacks infra, naming the module and the manifest fields", async () => {
    const o = await run(tree("import-error"));
    expect(o.status).toBe("infra");
    expect(o.missing_modules).toEqual(["lmr_no_such_module_xyz"]);
    expect(o.reason).toMatch(
      /module 'lmr_no_such_module_xyz' is not installed in lmr-env:[0-9a-f]+ .*environment\.requirements.*environment\.system_packages.*environment\.stand_ins/,
    );
    const graded = await run(tree("import-error"), { missingModule: "error" });
    expect(graded.status).toBe("error");
    expect(graded.reason).toMatch(/lmr_no_such_module_xyz/);
  });

  it("enforces the per-test alarm, the per-test kill and the wall limit, and removes the killed container", async () => {
    const alarm = await run(tree("loop"), { timeoutPerTestS: 1 });
    expect(alarm.status).toBe("failed");
    expect(alarm.tests[0]?.message).toMatch(/per-test limit of 1 s/);
    // the alarm is the oracle's: a target that ignores SIGALRM holds only its own container
    const stubborn = await run(tree("stubborn-loop"), { timeoutPerTestS: 1 });
    expect(stubborn.status).toBe("failed");
    expect(stubborn.tests[0]?.message).toMatch(/per-test limit of 1 s/);
    const t0 = Date.now();
    const wall = await run(tree("loop"), { timeoutTotalS: 3 });
    expect(wall.status).toBe("timeout");
    expect(wall.reason).toMatch(/wall limit of 3 s/);
    expect(Date.now() - t0).toBeLessThan(9000);
    expect(await lmrContainers()).toEqual([]);
  });

  it("caps memory (MemoryError in the test) and processes (the pids cgroup), and leaves none behind", async () => {
    const mem = await run(tree("memory-bomb"), { memoryMb: 512 });
    expect(mem.status).toBe("failed");
    expect(mem.tests[0]?.message).toMatch(/MemoryError/);
    expect(mem.isolation?.memory_mb).toBe(512);
    const forks = await run(tree("fork-many"), { maxProcs: 40 });
    expect(forks.status).toBe("failed");
    expect(forks.tests[0]?.message).toMatch(/Resource temporarily unavailable|BlockingIOError/);
    const sleepers = await execa("pgrep", ["-f", "sleep 61.2345"], { reject: false });
    expect(String(sleepers.stdout).trim()).toBe("");
  });

  it("ignores printed summaries, forged JUnit files, forged records, patched pytest and in-body skips", async () => {
    const printed = await run(tree("print-exit"));
    expect(printed.status).toBe("failed");
    expect(printed.tests[0]?.message).toMatch(/the candidate process ended while it ran calc:add/);
    await rm("/tmp/lmr-forged-junit.xml", { force: true });
    const junit = await run(tree("forge-junit"));
    expect(junit.status).toBe("failed");
    expect(junit.junit_xml).toMatch(/failures="2"/);
    expect(existsSync("/tmp/lmr-forged-junit.xml")).toBe(false);
    expect((await run(tree("forge-records"))).tests[0]?.message).toMatch(/not a bridge frame/);
    expect((await run(tree("patch-pytest"))).tests[0]?.message).toMatch(/assert -1 == 5/);
    expect((await run(tree("skip-from-body"))).tests[0]?.message).toMatch(/RemoteError: .*Skipped: not today/);
    const hijack = await run(tree("conftest-hijack"));
    expect(hijack.status).toBe("failed");
    expect(hijack.log).toMatch(/removed from the tree copy: conftest.py/);
  });

  it("mounts the grader read-only and shows nothing of the host, and no network", async () => {
    expect((await run(tree("rewrite-grader"))).status).toBe("failed");
    const secretDir = await mkdtemp(join(work, "task-"));
    await writeFile(join(secretDir, "reference.py"), "SECRET = 1\n");
    const peek = await mkdtemp(join(work, "peek-"));
    await cp(tree("peek"), peek, { recursive: true });
    await writeFile(join(peek, "peek.txt"), join(secretDir, "reference.py"));
    expect((await run(peek, { hidePaths: [] })).status).toBe("failed");
    const net = await mkdtemp(join(work, "net-"));
    await cp(tree("network"), net, { recursive: true });
    await writeFile(join(net, "port.txt"), "9");
    expect((await run(net)).status).toBe("failed");
  });

  it("runs as a non-root user on a read-only root with a private writable /tmp", async () => {
    const probe = await treeWith({
      "calc.py": [
        "import os",
        "def _why():",
        "    if os.getuid() == 0: return 'root'",
        "    try:",
        "        open('/etc/lmr-probe', 'w')",
        "        return 'root filesystem writable'",
        "    except OSError: pass",
        "    with open('/tmp/lmr-probe', 'w') as f: f.write('x')",
        `    if os.path.exists(${JSON.stringify(work)}): return 'host folder visible'`,
        "    with open(os.path.join(os.environ['HOME'], 'h'), 'w') as f: f.write('x')",
        "    return ''",
        "WHY = _why()",
        "def add(a, b):",
        "    assert not WHY, WHY",
        "    return a + b",
        "",
      ].join("\n"),
    });
    const o = await run(probe);
    expect(o.status, `${o.reason}\n${o.log}`).toBe("passed");
    expect(existsSync("/tmp/lmr-probe")).toBe(false);
  });

  it("the results socket is not in the candidate's container", async () => {
    // add is right only where the socket cannot be reached: a pass proves it was not
    const t = await treeWith({
      "calc.py": [
        "import socket",
        "REACHED = 0",
        "try:",
        "    s = socket.socket(socket.AF_UNIX)",
        "    s.connect('/lmr/chan/results.sock')",
        "    s.sendall(b'0' * 64 + b' {\"t\":\"done\"}\\n')",
        "    REACHED = 1",
        "except OSError:",
        "    pass",
        "def add(a, b):",
        "    return a + b + REACHED",
        "",
      ].join("\n"),
    });
    const o = await run(t);
    expect(o.status, o.log).toBe("passed");
  });
});

describe.skipIf(!ok)("choosing docker", () => {
  it("auto takes docker for a task environment whose image is built, bwrap or local otherwise, and says why once", async () => {
    const lines: string[] = [];
    setBackendNotice((l) => lines.push(l));
    const built = await selectBackend("auto", PLAIN_ENV);
    expect("backend" in built && built.backend.name).toBe("docker");
    await selectBackend("auto", PLAIN_ENV);
    const noEnv = await selectBackend("auto");
    expect("backend" in noEnv && noEnv.backend.name).not.toBe("docker");
    const missingEnv = { ...PLAIN_ENV, requirements: ["lmr-never-built==0.0.1"] };
    const missing = await selectBackend("auto", missingEnv);
    expect("backend" in missing && missing.backend.name).not.toBe("docker");
    setBackendNotice(undefined);
    expect(lines.filter((l) => /chose docker/.test(l))).toHaveLength(1);
    expect(lines.some((l) => /chose (bwrap|local).*no image lmr-env:[0-9a-f]+ for this environment \(lmr env build\)/.test(l))).toBe(true);
    const demanded = await runTests({ tree: tree("good"), grader: GRADER, python, sandbox: "docker", environment: missingEnv, timeoutTotalS: 10 });
    expect(demanded.status).toBe("infra");
    expect(demanded.backend).toBe("docker");
    expect(demanded.reason).toMatch(/is not built; run `lmr env build TASK_DIR`/);
  });

  it("sweeps containers whose lmr process is gone, and only those", async () => {
    const image = await envImageTag(normaliseEnvironment(PLAIN_ENV));
    const start = async (owner: string, name: string): Promise<void> => {
      await execa("docker", ["run", "-d", "--rm", "--name", name, "--label", `lmr.owner=${owner}`, "--network", "none", image, "sleep", "300"]);
    };
    const dead = `lmr-test-dead-${process.pid}`;
    const alive = `lmr-test-alive-${process.pid}`;
    await start(`${hostname()}/999999999/1`, dead);
    const self = (await readFile(`/proc/${process.pid}/stat`, "utf8")).split(") ")[1]!.split(" ")[19];
    await start(`${hostname()}/${process.pid}/${self}`, alive);
    try {
      forgetDockerTargets();
      const removed = await sweepStaleContainers();
      expect(removed).toContain(dead);
      expect(removed).not.toContain(alive);
      expect(await lmrContainers()).toEqual([alive]);
    } finally {
      await execa("docker", ["rm", "-f", dead, alive], { reject: false });
    }
  });
});

describe.skipIf(!ok)("runPythonInImage (lmr record --sandbox docker)", () => {
  it("runs the image's interpreter in a writable work folder, as non-root, and stops it at the timeout", async () => {
    const inImage = await resolveRunPython({ sandbox: "docker", environment: PLAIN_ENV });
    expect(inImage.image?.tag).toMatch(/^lmr-env:/);
    const dir = await mkdtemp(join(work, "tool-"));
    const r = await runPythonInImage({
      python: inImage,
      args: ["-c", "import os, lmr_harness; open('out.txt', 'w').write(str(os.getuid()))"],
      workDir: dir,
      cwd: dir,
      timeoutS: 60,
    });
    expect(r.exitCode, r.output).toBe(0);
    expect(Number(await readFile(join(dir, "out.txt"), "utf8"))).not.toBe(0);
    const slow = await runPythonInImage({ python: inImage, args: ["-c", "import time; time.sleep(60)"], workDir: dir, cwd: dir, timeoutS: 2 });
    expect(slow.timedOut).toBe(true);
    expect(await lmrContainers()).toEqual([]);
    const host = await resolveRunPython({ sandbox: "none", environment: PLAIN_ENV });
    await expect(runPythonInImage({ python: host, args: [], workDir: dir, cwd: dir, timeoutS: 5 })).rejects.toMatchObject({ code: "run/not-in-image" });
  });
});
