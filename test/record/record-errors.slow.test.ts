import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallsFile } from "../../src/record/calls.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonEnvelope } from "../helpers/run-cli.js";
import { buildTask, copyTaskWithoutRecord, runReplay } from "./helpers.js";

afterAll(removeTempDirs);

const IMPORT = "from trainers import preference_loss as f\n";

describe("lmr record: what stops a recording", () => {
  let root: string;
  let taskDir: string;

  beforeAll(async () => {
    root = await makeTempDir("record-errors");
    taskDir = await copyTaskWithoutRecord(root, "pref-loss");
  });

  const exists = (p: string) =>
    stat(p).then(
      () => true,
      () => false,
    );

  it("an argument lmr cannot store: exit 2 naming the call, the argument and its type", async () => {
    const r = await runCli([
      "record",
      taskDir,
      "--driver",
      `${IMPORT}f([-1.0], [-2.0], [-1.0], [-2.0], 0.1)\nf([-1.0], [-2.0], [-1.0], [-2.0], beta=lambda: 0.1)`,
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("call 1 of preference_loss: argument 'beta' has type builtins.function, which lmr cannot record");
    expect(r.stderr).toContain("/targets/0/record/skip_args");
    expect(await exists(join(taskDir, "fixtures/calls.json"))).toBe(false);
  });

  it("an open file passed positionally, inside a list: the parameter name and the path into it", async () => {
    await writeFile(join(taskDir, "bad_driver.py"), `import os\n${IMPORT}f([open(os.devnull)], [-2.0], [-1.0], [-2.0], 0.1)\n`);
    const r = await runCli(["record", taskDir, "--driver-file", "bad_driver.py", "--json"]);
    expect(r.exitCode).toBe(2);
    const out = jsonEnvelope(r.stdout) as any;
    expect(out.ok).toBe(false);
    expect(out.error.code).toBe("record/unserialisable");
    expect(out.error.message).toContain("argument 'policy_chosen_logps' [0] has type _io.TextIOWrapper");
  });

  it("still fails when the driver swallows the error", async () => {
    const r = await runCli(["record", taskDir, "--driver", `${IMPORT}try:\n    f([-1.0], [-2.0], [-1.0], [-2.0], beta=print)\nexcept Exception:\n    pass\n`]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("argument 'beta' has type builtins.builtin_function_or_method");
  });

  it("a driver that raises: exit 2 with the exception and the driver's line", async () => {
    await writeFile(join(taskDir, "broken.py"), `${IMPORT}x = 1\ny = x / 0\n`);
    const r = await runCli(["record", taskDir, "--driver-file", "broken.py"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("broken.py: the driver raised ZeroDivisionError: division by zero");
    expect(r.stderr).toMatch(/broken\.py", line 3/);
  });

  it("a driver that runs too long is stopped", async () => {
    const t0 = Date.now();
    const r = await runCli(["record", taskDir, "--driver", "import time\ntime.sleep(60)", "--timeout", "1"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("the driver ran longer than 1 s and was stopped");
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it("usage: no driver, two drivers, a driver outside the task folder, bad numbers", async () => {
    const none = await runCli(["record", taskDir]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain("no driver: pass --driver CODE or --driver-file PY, or set record.driver");
    const both = await runCli(["record", taskDir, "--driver", "pass", "--driver-file", "x.py"]);
    expect(both.exitCode).toBe(2);
    const outside = join(root, "outside.py");
    await writeFile(outside, "pass\n");
    const far = await runCli(["record", taskDir, "--driver-file", outside]);
    expect(far.exitCode).toBe(2);
    expect(far.stderr).toContain("outside the task folder");
    const bad = await runCli(["record", taskDir, "--driver", "pass", "--max-calls", "0"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("--max-calls must be a whole number >= 1");
  });

  it("help has an example", async () => {
    const r = await runCli(["record", "--help"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("$ lmr record tasks/pref-loss --driver-file");
    const s = await runCli(["scaffold", "tests", "--help"]);
    expect(s.stdout).toContain("$ lmr scaffold tests tasks/pref-loss");
  });

  it("scaffold without a recording: exit 2 with a hint to record first", async () => {
    const fresh = await copyTaskWithoutRecord(await makeTempDir("record-none"), "pref-loss");
    const r = await runCli(["scaffold", "tests", fresh]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("no recorded calls");
    expect(r.stderr).toContain("lmr record");

    // a recording of a symbol the manifest no longer targets
    const stale = {
      format: "lmr-calls/1",
      task: "pref-loss",
      driver: { code: "" },
      seed: 0,
      seeded: [],
      environment: {},
      arrays: null,
      targets: [
        {
          file: "trainers.py",
          symbol: "old_loss",
          module: "trainers",
          owner: null,
          name: "old_loss",
          kind: "function",
          async: false,
          max_calls: 50,
          calls_seen: 1,
          calls_recorded: 1,
          self_attrs: null,
          skip_args: [],
          calls: [{ index: 0, arg_names: [], args: [], kwargs: {}, result: 1 }],
        },
      ],
    };
    await writeFile(join(fresh, "fixtures", "calls.json"), JSON.stringify(stale));
    const r2 = await runCli(["scaffold", "tests", fresh]);
    expect(r2.exitCode).toBe(2);
    expect(r2.stderr).toContain("calls of old_loss in trainers.py, which is not a target in task.json");
  });
});

describe("record.skip_args", () => {
  it("leaves the argument out of the recording and replays with the parameter's default", async () => {
    const taskDir = await copyTaskWithoutRecord(await makeTempDir("record-skip"), "pref-loss", (m) => {
      m.targets[0].record = { skip_args: ["label_smoothing"] };
    });
    const driver = `${IMPORT}f([-1.0, -3.0], [-2.0, -1.0], [-1.5, -2.0], [-1.0, -1.0], 0.2, label_smoothing=0.0)\n`;
    const rec = await runCli(["record", taskDir, "--driver", driver]);
    expect(rec.exitCode, rec.stderr).toBe(0);
    const calls = JSON.parse(await readFile(join(taskDir, "fixtures/calls.json"), "utf8")) as CallsFile;
    expect(calls.targets[0]!.calls[0]!.kwargs).toEqual({ label_smoothing: { __lmr__: "skipped", type: "builtins.float", has_default: true } });
    expect(calls.driver).toEqual({ code: driver });
    expect((await runCli(["scaffold", "tests", taskDir])).exitCode).toBe(0);
    const built = await buildTask(taskDir);
    const reference = await runReplay(built, "tests/test_preference_loss_replay.py", built.reference);
    expect(reference.status, reference.log).toBe("passed");
  });
});
