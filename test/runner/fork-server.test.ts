import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_FILES } from "../../src/bundle/index.js";
import { VALIDATORS, loadValidator } from "../../src/core/schema-validator.js";
import { ForkServer } from "../../src/runner/fork-server.js";
import { resolvePython } from "../../src/runner/index.js";
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
