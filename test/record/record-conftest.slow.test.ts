import { cp, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CallsFile } from "../../src/record/calls.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonEnvelope } from "../helpers/run-cli.js";
import { buildTask, copyTaskWithoutRecord, RECORD_FIXTURES, runReplay } from "./helpers.js";

afterAll(removeTempDirs);

/**
 * A task over test/fixtures/record/standin-upstream, whose scoring.py imports a package
 * that is not installed; with `setup`, tests/candidate_setup.py (tests.candidate.setup) stands
 * it in, as a grader's set-up does in the candidate process.
 */
async function standinTask(label: string, setup: string | null): Promise<string> {
  const root = await makeTempDir(label);
  const taskDir = await copyTaskWithoutRecord(root, "pref-loss", async (m) => {
    await cp(join(RECORD_FIXTURES, "standin-upstream"), join(root, "upstreams", "standin"), { recursive: true });
    m.upstream.path = "../../upstreams/standin";
    m.targets = [{ file: "scoring.py", symbol: "weighted_mean", mode: "body" }];
    m.context_files = [];
    m.tests.files = setup === null ? ["tests/test_weighted_mean.py"] : ["tests/candidate_setup.py", "tests/test_weighted_mean.py"];
    if (setup !== null) m.tests.candidate = { setup: "tests/candidate_setup.py" };
    delete m.verification;
    delete m.workspace; // it names files of the example's own upstream
  });
  await mkdir(join(taskDir, "tests"), { recursive: true });
  await cp(join(RECORD_FIXTURES, "standin-task", "test_weighted_mean.py"), join(taskDir, "tests", "test_weighted_mean.py"));
  if (setup !== null) await writeFile(join(taskDir, "tests", "candidate_setup.py"), setup);
  return taskDir;
}

const STANDINS = () => readFile(join(RECORD_FIXTURES, "standin-task", "candidate_setup.py"), "utf8");

// The driver checks that the set-up ran first, as a module named conftest (as pytest would load a conftest) from the task's tests folder.
const DRIVER = [
  "import sys",
  'loaded = sys.modules["conftest"]',
  'assert loaded.LOADED_BY == "conftest" and loaded.__file__.replace("\\\\", "/").endswith("tests/candidate_setup.py"), loaded',
  "from scoring import weighted_mean, report",
  "weighted_mean([1.0, 2.0], [1.0, 3.0])",
  "report([4.0, 0.0, 2.0], [0.5, 0.25, 0.25])",
  "",
].join("\n");

describe("lmr record runs the candidate's set-up and the grader's conftest.py files before importing the targets", () => {
  it("records a target whose module imports a package only the set-up stands in, and the replay passes (the set-up runs in the candidate)", async () => {
    const taskDir = await standinTask("record-conftest", await STANDINS());
    const rec = await runCli(["record", taskDir, "--driver", DRIVER, "--json"]);
    expect(rec.exitCode, rec.stderr).toBe(0);
    const calls = JSON.parse(await readFile(join(taskDir, "fixtures/calls.json"), "utf8")) as CallsFile;
    const [target] = calls.targets;
    expect(target).toMatchObject({ symbol: "weighted_mean", calls_seen: 2, calls_recorded: 2 });
    expect(target!.calls.map((c) => c.result)).toEqual([1.75, 2.5]);

    const scaffold = await runCli(["scaffold", "tests", taskDir]);
    expect(scaffold.exitCode, scaffold.stderr).toBe(0);
    const manifest = JSON.parse(await readFile(join(taskDir, "task.json"), "utf8"));
    const testFile = "tests/test_weighted_mean_replay.py";
    expect(manifest.tests.files).toContain(testFile);
    const built = await buildTask(taskDir);
    const reference = await runReplay(built, testFile, built.reference);
    expect(reference.status, reference.log).toBe("passed");
    expect(reference.counts.passed).toBe(2);
    const stub = await runReplay(built, testFile, undefined);
    expect(stub.counts).toMatchObject({ passed: 0, failed: 2, errors: 0 });
  });

  it("without the set-up the import fails as before (the stand-in is what makes it work)", async () => {
    const taskDir = await standinTask("record-no-conftest", null);
    const r = await runCli(["record", taskDir, "--driver", "from scoring import weighted_mean"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("cannot import scoring (from scoring.py): ModuleNotFoundError");
    expect(r.stderr).toContain("lmr_fixture_tracker_not_installed");
  });

  it("runs the set-up, then every conftest.py in the folders of tests.files in sorted path order, and only those", async () => {
    const log = (name: string) => `import builtins\nbuiltins.lmr_order = getattr(builtins, "lmr_order", []) + [${JSON.stringify(name)}]\n`;
    const taskDir = await standinTask("record-conftest-order", log("setup") + (await STANDINS()));
    await mkdir(join(taskDir, "tests", "b_more"), { recursive: true });
    await mkdir(join(taskDir, "tests", "a_more"), { recursive: true });
    await mkdir(join(taskDir, "notes"), { recursive: true });
    await writeFile(join(taskDir, "tests", "conftest.py"), log("tests"));
    await writeFile(join(taskDir, "tests", "b_more", "conftest.py"), log("tests/b_more"));
    await writeFile(join(taskDir, "tests", "a_more", "conftest.py"), log("tests/a_more"));
    await writeFile(join(taskDir, "notes", "conftest.py"), log("notes")); // no test file there: not run
    await writeFile(join(taskDir, "tests", "b_more", "test_b.py"), "def test_b():\n    pass\n");
    await writeFile(join(taskDir, "tests", "a_more", "test_a.py"), "def test_a():\n    pass\n");
    const manifestPath = join(taskDir, "task.json");
    const m = JSON.parse(await readFile(manifestPath, "utf8"));
    m.tests.files.push("tests/b_more/test_b.py", "tests/a_more/test_a.py");
    await writeFile(manifestPath, JSON.stringify(m, null, 2) + "\n");
    const driver =
      'import builtins\nassert builtins.lmr_order == ["setup", "tests/a_more", "tests/b_more", "tests"], builtins.lmr_order\nfrom scoring import weighted_mean\nweighted_mean([1.0], [1.0])\n';
    const r = await runCli(["record", taskDir, "--driver", driver]);
    expect(r.exitCode, r.stderr).toBe(0);
  });

  it("a set-up that fails stops the recording with exit 2, naming the file and the field", async () => {
    const taskDir = await standinTask("record-conftest-broken", 'raise RuntimeError("needs a GPU")\n');
    const r = await runCli(["record", taskDir, "--driver", "from scoring import weighted_mean", "--json"]);
    expect(r.exitCode).toBe(2);
    const out = jsonEnvelope(r.stdout) as any;
    expect(out.error.code).toBe("record/conftest-failed");
    expect(out.error.message).toContain("tests/candidate_setup.py failed while lmr record loaded it before importing the targets: RuntimeError: needs a GPU");
    expect(out.error.pointer).toBe("/tests/candidate/setup");
    expect(
      await stat(join(taskDir, "fixtures/calls.json")).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
  });

  it("a library the set-up hides (sys.modules[name] = None) is neither seeded nor named in calls.json", async () => {
    const taskDir = await standinTask("record-conftest-hidden", 'import sys\nsys.modules["torch"] = None\nimport numpy\n' + (await STANDINS()));
    const driver = "import sys\nassert sys.modules['torch'] is None\nfrom scoring import weighted_mean\nweighted_mean([1.0, 2.0], [1.0, 3.0])\n";
    const r = await runCli(["record", taskDir, "--driver", driver]);
    expect(r.exitCode, r.stderr).toBe(0);
    const calls = JSON.parse(await readFile(join(taskDir, "fixtures/calls.json"), "utf8")) as CallsFile & {
      seeded: string[];
      environment: Record<string, string>;
    };
    expect(calls.seeded).toEqual(["random", "numpy"]);
    expect(Object.keys(calls.environment).sort()).toEqual(["numpy", "python"]);
  });
});
