import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_FILES } from "../../src/bundle/index.js";
import { VALIDATORS, loadValidator } from "../../src/core/schema-validator.js";
import { ForkServer } from "../../src/runner/fork-server.js";
import { probeBwrap, resolvePython, runTests } from "../../src/runner/index.js";
import { OracleServer } from "../../src/runner/oracle-server.js";
import { FORKED_NOTE } from "../../src/runner/run-tests.js";
import type { RunTarget } from "../../src/runner/run-target.js";
import type { RunRequest } from "../../src/runner/types.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";

afterAll(removeTempDirs);

describe("fork servers speak the control protocol (schema/fork-server-message.schema.json)", () => {
  const valid = loadValidator(VALIDATORS.forkServerMessage);

  it("accepts the messages both servers and lmr send, and refuses malformed ones", () => {
    for (const m of [
      { t: "ready", pid: 1, preloaded: ["torch"], failed: [] },
      { t: "ready" },
      { t: "started", id: "0", pid: 7 },
      { t: "exit", id: "0", code: null, signal: "SIGKILL", timed_out: true },
      { t: "opened", id: "0", error: "OSError: boom" },
      { t: "closed", id: "0" },
      { id: "0", argv: ["-m", "x"], key: "a".repeat(64), env: { HOME: "/h" }, log: "/l", timeout_s: 30 },
      { op: "open", id: "0", socket: "/s", tree: "/t", support: "/u", trace: [], report_imports: false, warm: [], env: {}, as_bytes: 1, log: "/l" },
      { op: "close", id: "0" },
    ])
      expect(valid(m), JSON.stringify(m)).toBe(true);
    for (const m of [
      { t: "exit", id: "0", code: "0", signal: null, timed_out: false },
      { t: "exit", id: "0", code: 0, signal: null },
      { t: "opened", id: 0 },
      { t: "ready", verdict: "passed" },
      { id: "0", argv: [], key: "short", log: "/l" },
      { op: "open", id: "0", socket: "/s", tree: "/t" },
    ])
      expect(valid(m), JSON.stringify(m)).toBe(false);
  });

  describe("a real pair of servers on the pref-loss example", () => {
    let bundle: string;
    let req: RunRequest;
    let server: ForkServer | undefined;
    beforeAll(async () => {
      const out = await makeTempDir("fork-bundle");
      const r = await runCli(["build", "examples/tasks/pref-loss", "--out", out]);
      expect(r.exitCode, r.stderr).toBe(0);
      bundle = join(out, "pref-loss");
      const python = await resolvePython({ python: "/usr/bin/python3" });
      req = {
        tree: join(bundle, BUNDLE_FILES.workspace),
        grader: join(bundle, BUNDLE_FILES.grader),
        python,
        sandbox: "bwrap",
        timeoutTotalS: 120,
        timeoutPerTestS: 60,
        network: false,
        scratchParent: out,
      };
      server = await ForkServer.start({ python, sandbox: "bwrap", preload: [], network: false, scratchParent: out });
    }, 120_000);
    afterAll(async () => server?.close());

    it("starts, and grades the reference as passed and the stub as failed through its forked children", async () => {
      expect(server, "the fork server did not start").toBeDefined();
      const reference = await readFile(join(bundle, BUNDLE_FILES.reference, "trainers.py"), "utf8");
      const passed = await server!.run({ ...req, overlay: { "trainers.py": reference } });
      expect(passed.status, passed.log.slice(-2000)).toBe("passed");
      const failed = await server!.run({ ...req, overlay: {} });
      expect(failed.status).toBe("failed");
    });
  });
});

describe("lmr eval's oracles' server (runner/oracle-server.ts)", () => {
  const wrappers: string[] = [];
  afterAll(async () => Promise.all(wrappers.map((d) => rm(d, { recursive: true, force: true }))));
  let bundle: string;
  let out: string;
  let base: RunRequest;
  let reference: string;
  beforeAll(async () => {
    out = await makeTempDir("oracle-bundle");
    const r = await runCli(["build", "examples/tasks/pref-loss", "--out", out]);
    expect(r.exitCode, r.stderr).toBe(0);
    bundle = join(out, "pref-loss");
    reference = await readFile(join(bundle, BUNDLE_FILES.reference, "trainers.py"), "utf8");
    const python = await resolvePython({ python: "/usr/bin/python3" });
    base = {
      tree: join(bundle, BUNDLE_FILES.workspace),
      grader: join(bundle, BUNDLE_FILES.grader),
      python,
      timeoutTotalS: 120,
      timeoutPerTestS: 60,
      network: false,
      scratchParent: out,
      warmModules: ["trainers"],
    };
  }, 120_000);

  const target = (python: RunRequest["python"]): RunTarget => ({ backend: "local", python, runner: "pytest", reason: "test" });

  it("forks the tests of every run from one server: the reference passes, the stub fails, the grader is watched", async () => {
    const t = target(base.python);
    const server = await OracleServer.start({ target: t, scratchParent: out });
    expect(server).toBeDefined();
    try {
      const passed = await runTests({ ...base, target: t, overlay: { "trainers.py": reference } }, { oracles: server! });
      expect(passed.status, passed.log.slice(-2000)).toBe("passed");
      expect(passed.log).toContain(FORKED_NOTE);
      const failed = await runTests({ ...base, target: t, overlay: {} }, { oracles: server! });
      expect(failed.status).toBe("failed");
      expect(failed.log).toContain(FORKED_NOTE);
      // the candidate of a local run can write anywhere its user can: a change to its run's grader copy is seen
      const tamper = `${reference}\nimport glob as _g\nfor _f in _g.glob(${JSON.stringify(out)} + "/lmr-fork-*/o/*/root/lmr_tests/tests/*.py"):\n    open(_f, "a").write("# changed\\n")\n`;
      const tampered = await runTests({ ...base, target: t, overlay: { "trainers.py": tamper } }, { oracles: server! });
      expect(tampered.status).toBe("error");
      expect(tampered.reason).toMatch(/grader files were modified/);
    } finally {
      await server?.close();
    }
  }, 120_000);

  it.each(["local", "bwrap"] as const)(
    "under %s, a run whose server did not start gets a fresh oracle and the same verdict",
    async (backend) => {
      if (backend === "bwrap" && !(await probeBwrap()).ok) return;
      // an interpreter that refuses to be the server, and is plain Python otherwise
      // outside /tmp: a sandbox binds the folder above the interpreter's bin/, and its /tmp is a tmpfs of its own
      const dir = await mkdtemp("/var/tmp/lmr-no-server-python-");
      wrappers.push(dir);
      await mkdir(join(dir, "bin"));
      const wrapper = join(dir, "bin", "python3");
      await writeFile(wrapper, `#!/bin/sh\ncase "$*" in *fork_server.py*) echo "no server here" >&2; exit 3;; esac\nexec /usr/bin/python3 "$@"\n`, {
        mode: 0o755,
      });
      const python = { ...base.python, path: wrapper };
      const t = { ...target(python), backend };
      const server = await OracleServer.start({ target: t, scratchParent: out });
      expect(server).toBeDefined();
      try {
        const passed = await runTests({ ...base, python, target: t, overlay: { "trainers.py": reference } }, { oracles: server! });
        expect(passed.status, passed.log.slice(-2000)).toBe("passed");
        expect(passed.log).not.toContain(FORKED_NOTE);
        const failed = await runTests({ ...base, python, target: t, overlay: {} }, { oracles: server! });
        expect(failed.status).toBe("failed");
      } finally {
        await server?.close();
      }
    },
    120_000,
  );
});
