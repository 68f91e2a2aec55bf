import { execa } from "execa";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { VerificationRecord } from "../../src/verify/record.js";
import { makeTempDir, removeTempDirs, REPO_ROOT } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { copyTask } from "../helpers/task-copy.js";
import { compileVerifySchemas, schemaErrors } from "./schemas.js";

afterAll(removeTempDirs);

type Output = { tasks: (VerificationRecord & { unchanged: boolean; kept?: { bundle: string; tree: string; command: string } })[] };

const BROKEN = join("test", "fixtures", "broken-tasks");
const SIBLINGS = join("test", "fixtures", "sibling-tasks");
// the host backend: these cases are about what verify concludes, not about isolation (a built
// docker image would make `auto` run them in a container, where an undeclared module is absent)
const FAST = ["--runs", "1", "--mutants", "2", "--no-write", "-j", "1", "--sandbox", "none"];
const schemas = compileVerifySchemas();
const hasJoblib = (await execa(process.env.LMR_PYTHON ?? "python3", ["-c", "import joblib"], { reject: false })).exitCode === 0;
if (!hasJoblib) console.warn("skipping the fork-server environment test: joblib is not importable (apt-get install python3-joblib)");

async function verify(args: string[]): Promise<{ exitCode: number; out: Output }> {
  const r = await runCli(["verify", ...args, "--json"]);
  const out = jsonData(r.stdout) as Output;
  expect(schemaErrors(schemas.output, out)).toEqual([]);
  return { exitCode: r.exitCode, out };
}

describe.concurrent("the task standard in lmr verify", () => {
  it("alternatives: a test that pins what the task leaves open fails the alternative that differs, naming it and the test", async () => {
    const { exitCode, out } = await verify([join(BROKEN, "pinned-detail"), ...FAST]);
    const rec = out.tasks[0]!;
    expect(exitCode).toBe(1);
    expect(rec.failure).toMatchObject({ step: "alternatives", kind: "check" });
    expect(rec.failure!.reason).toContain("'numpy-free-loop' failed");
    expect(rec.failure!.reason).toContain("test_error_message_names_k");
    const alts = Object.fromEntries(rec.steps.alternatives.alternatives.map((a) => [a.name, a]));
    expect(alts["upstream-style"]!.status).toBe("passed");
    expect(alts["numpy-free-loop"]!.status).toBe("failed");
    expect(alts["numpy-free-loop"]!.failing?.[0]?.message).toContain("k must be positive, got 0");
    // every other step holds: only the alternatives step says the tests are too narrow
    for (const s of ["build", "reference", "stub", "mutants", "leaks"] as const) expect(rec.steps[s].ok, s).toBe(true);
  });

  it("alternatives: fewer than min_alternatives is a failure that says how many are needed", async () => {
    const { exitCode, out } = await verify([join(BROKEN, "removed-copy"), ...FAST, "--min-alternatives", "2"]);
    expect(exitCode).toBe(1);
    expect(out.tasks[0]!.failure).toMatchObject({ step: "alternatives", kind: "check" });
    expect(out.tasks[0]!.steps.alternatives.reason).toContain("0 alternative(s) under alternatives/, at least 2 needed");
  });

  it("workspace.remove takes a leftover copy out, and the record shows it with the reason", async () => {
    const { exitCode, out } = await verify([join(BROKEN, "removed-copy"), ...FAST]);
    const rec = out.tasks[0]!;
    expect(exitCode).toBe(0);
    expect(rec.steps.leaks.leaks).toEqual([]);
    expect(rec.steps.leaks.removed).toContainEqual({ path: "legacy_metrics.py", reason: "manifest", why: "an older copy of ndcg_at_k" });
    // the same definition elsewhere would have been listed for review; it is gone with the file
    expect(rec.steps.leaks.review ?? []).toEqual([]);
  });

  it("a module the tests import but nobody installed is an infrastructure failure naming the module and the manifest field", async () => {
    const { exitCode, out } = await verify([join(BROKEN, "missing-module"), ...FAST]);
    const rec = out.tasks[0]!;
    expect(exitCode).toBe(3);
    expect(rec.failure).toMatchObject({ step: "reference", kind: "infra" });
    expect(rec.failure!.reason).toContain("module 'lmr_fixture_absent' is not installed");
    expect(rec.failure!.reason).toContain("environment.requirements");
    expect(rec.failure!.reason).not.toContain("stub");
  });

  it("an installed module the environment does not declare fails the environment step", async () => {
    const { exitCode, out } = await verify([join(BROKEN, "undeclared-module"), ...FAST]);
    const rec = out.tasks[0]!;
    expect(exitCode).toBe(1);
    expect(rec.failure).toMatchObject({ step: "environment", kind: "check" });
    expect(rec.failure!.reason).toContain("'numpy'");
    expect(rec.failure!.reason).toContain("environment.requirements");
    expect(rec.steps.environment.modules).toContainEqual(expect.objectContaining({ module: "numpy", origin: "installed" }));
    expect(rec.steps.environment.modules?.map((m) => m.module)).not.toContain("iniconfig");
  });

  it("the dataset-wide leak scan: a workspace showing a sibling task's reference fails; masking it (workspace.mask) passes", async () => {
    const { exitCode, out } = await verify(["--tasks-dir", SIBLINGS, ...FAST]);
    expect(exitCode).toBe(1);
    const byId = Object.fromEntries(out.tasks.map((t) => [t.task_id, t]));
    const leaky = byId["ttr-leaks-sibling"]!;
    expect(leaky.failure).toMatchObject({ step: "leaks" });
    expect(leaky.failure!.reason).toContain("another task's reference");
    expect(leaky.failure!.reason).toContain("bigrams-masks-sibling:stats.py::top_bigrams");
    expect(leaky.steps.leaks.siblings).toEqual(["bigrams-masks-sibling"]);
    expect(byId["bigrams-masks-sibling"]!.ok).toBe(true);
    // one task given alone is still scanned against the tasks beside it
    const alone = await verify([join(SIBLINGS, "ttr-leaks-sibling"), ...FAST]);
    expect(alone.out.tasks[0]!.failure?.step).toBe("leaks");
    const off = await verify([join(SIBLINGS, "ttr-leaks-sibling"), ...FAST, "--no-dataset-scan"]);
    expect(off.out.tasks[0]!.ok).toBe(true);
  });

  it("a failing reference shows the failing test and its assertion message", async () => {
    const taskDir = await copyTask(await makeTempDir("verify-assert"), "pref-loss");
    const test = join(taskDir, "tests", "test_preference_loss.py");
    await writeFile(test, (await readFile(test, "utf8")) + "\n\ndef test_added_wrong_expectation():\n    assert 1 + 1 == 3, 'the recorded margin is 3'\n");
    const { exitCode, out } = await verify([taskDir, ...FAST, "--min-alternatives", "0"]);
    expect(exitCode).toBe(1);
    const rec = out.tasks[0]!;
    expect(rec.failure?.step).toBe("reference");
    expect(rec.failure!.reason).toContain("test_added_wrong_expectation");
    expect(rec.failure!.reason).toContain("the recorded margin is 3");
    expect(rec.steps.reference.runs[0]!.failing?.[0]?.id).toContain("test_added_wrong_expectation");
  });

  it("--keep leaves the bundle and prints a command that reruns the reference's tests by hand", async () => {
    const { exitCode, out } = await verify([join(BROKEN, "removed-copy"), ...FAST, "--keep"]);
    expect(exitCode).toBe(0);
    const kept = out.tasks[0]!.kept!;
    expect(kept.command).toContain(kept.tree);
    const r = await execa("bash", ["-c", kept.command], { cwd: REPO_ROOT, reject: false });
    expect(r.exitCode, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/\d+ passed/);
    const human = await runCli(["verify", join(BROKEN, "removed-copy"), ...FAST, "--keep"]);
    expect(human.stdout).toContain("rerun the reference's tests by hand:");
  });

  it("fixtures: a hand-edited fixture fails the fixtures step, naming the file and the first difference", async () => {
    const taskDir = await copyTask(await makeTempDir("verify-fixture"), "pref-loss");
    const fixture = join(taskDir, "fixtures", "preference_cases.json");
    const text = await readFile(fixture, "utf8");
    const edited = text.replace(/(\d)(\d)(,|\n)/, (_m, a: string, b: string, end: string) => `${a}${b === "9" ? "0" : String(Number(b) + 1)}${end}`);
    expect(edited).not.toBe(text);
    await writeFile(fixture, edited);
    const { exitCode, out } = await verify([taskDir, ...FAST]);
    const rec = out.tasks[0]!;
    expect(exitCode).toBe(1);
    expect(rec.failure).toMatchObject({ step: "fixtures", kind: "check" });
    expect(rec.steps.fixtures.difference).toContain("fixtures/preference_cases.json");
    // the untouched copy regenerates byte for byte
    const clean = await copyTask(await makeTempDir("verify-fixture-clean"), "pref-loss");
    const ok = await verify([clean, ...FAST]);
    expect(ok.out.tasks[0]!.steps.fixtures).toMatchObject({ ok: true });
    expect(ok.out.tasks[0]!.steps.fixtures.files).toContain("fixtures/preference_cases.json");
  });

  it("a mutant of a line no test executes is reported as uncovered, with its line, apart from survivors", async () => {
    const { exitCode, out } = await verify([join(BROKEN, "untested-line"), "--runs", "1", "--no-write", "--sandbox", "none"]);
    const m = out.tasks[0]!.steps.mutants;
    expect(exitCode).toBe(0);
    expect(m.uncovered?.length).toBeGreaterThan(0);
    expect(m.uncovered!.every((u) => u.description.startsWith("line 23:"))).toBe(true);
    expect(m.killed + m.survivors.length + m.uncovered!.length).toBe(m.total);
  });

  it("the fast mutant path gives the kill count and survivors of the whole-suite path", async () => {
    const args = [join("examples", "tasks", "rouge-notebook"), "--runs", "1", "--mutants", "12", "--no-write", "--sandbox", "none", "--no-dataset-scan"];
    const [fast, full] = await Promise.all([verify(args), verify([...args, "--no-fast-mutants"])]);
    const a = fast.out.tasks[0]!.steps.mutants;
    const b = full.out.tasks[0]!.steps.mutants;
    expect(a.total).toBe(b.total);
    expect(a.killed).toBe(b.killed);
    expect([...a.survivors, ...(a.uncovered ?? [])].map((s) => s.id).sort()).toEqual(b.survivors.map((s) => s.id).sort());
    expect(b.survivors.length).toBeGreaterThan(0); // the comparison covers survivors, not only kills
  });

  it.skipIf(!hasJoblib)(
    "the fork server imports a task's modules under the environment its conftest sets (joblib reads JOBLIB_MULTIPROCESSING when first imported)",
    async () => {
      const taskDir = await copyTask(await makeTempDir("verify-env"), "pref-loss");
      await writeFile(join(taskDir, "tests", "conftest.py"), 'import os\n\nos.environ["JOBLIB_MULTIPROCESSING"] = "0"\n');
      await writeFile(
        join(taskDir, "tests", "test_joblib_env.py"),
        "import joblib._multiprocessing_helpers as helpers\n\n\ndef test_joblib_saw_the_conftest_setting():\n    assert helpers.mp is None\n",
      );
      const manifest = JSON.parse(await readFile(join(taskDir, "task.json"), "utf8")) as {
        tests: { files: string[] };
        environment: { system_packages: string[] };
      };
      manifest.tests.files.push("tests/conftest.py", "tests/test_joblib_env.py");
      manifest.environment.system_packages.push("python3-joblib");
      await writeFile(join(taskDir, "task.json"), JSON.stringify(manifest, null, 2));
      // run 1 is a fresh process; runs 2 and 3 fork from a server that preloaded joblib
      const { out } = await verify([taskDir, "--runs", "3", "--mutants", "0", "--no-write", "-j", "1", "--sandbox", "none"]);
      const runs = out.tasks[0]!.steps.reference.runs;
      expect(runs.map((r) => r.status)).toEqual(["passed", "passed", "passed"]);
    },
  );

  it("the fork server starts as the first run's conftest left sys.modules: what it blocked stays blocked and a fake stays the fake for what the server preloads", async () => {
    const taskDir = await copyTask(await makeTempDir("verify-modules"), "pref-loss");
    // pickle falls back to its Python classes without _pickle; statistics binds the Fraction it finds
    await writeFile(
      join(taskDir, "tests", "conftest.py"),
      'import sys\nimport types\n\nsys.modules["_pickle"] = None\nfake = types.ModuleType("fractions")\n\n\nclass Fraction:\n    pass\n\n\nfake.Fraction = Fraction\nsys.modules["fractions"] = fake\n\nimport pickle  # noqa: E402\nimport statistics  # noqa: E402\n',
    );
    await writeFile(
      join(taskDir, "tests", "test_modules_as_left.py"),
      'import pickle\nimport statistics\nimport sys\n\n\ndef test_pickle_has_its_python_classes():\n    assert pickle.Pickler is pickle._Pickler\n\n\ndef test_statistics_has_the_fake_fraction():\n    assert statistics.Fraction is sys.modules["fractions"].Fraction\n',
    );
    const manifest = JSON.parse(await readFile(join(taskDir, "task.json"), "utf8")) as { tests: { files: string[] } };
    manifest.tests.files.push("tests/conftest.py", "tests/test_modules_as_left.py");
    await writeFile(join(taskDir, "task.json"), JSON.stringify(manifest, null, 2));
    const cache = await makeTempDir("verify-modules-cache");
    // run 1 is a fresh process whose modules make the plan; runs 2 and 3 fork from a server that
    // imported pickle and statistics; the second verify runs all three in a server
    for (let i = 0; i < 2; i++) {
      const r = await runCli(["verify", taskDir, "--runs", "3", "--mutants", "0", "--no-write", "-j", "1", "--sandbox", "none", "--json"], {
        env: { LMR_CACHE: cache },
      });
      const rec = (jsonData(r.stdout) as Output).tasks[0]!;
      expect(
        rec.steps.reference.runs.map((x) => [x.status, x.failed]),
        `verify ${i + 1}`,
      ).toEqual([
        ["passed", 0],
        ["passed", 0],
        ["passed", 0],
      ]);
    }
    const { readdir } = await import("node:fs/promises");
    const plans = (await readdir(join(cache, "verify"))).filter((n) => n.startsWith("server-plan-"));
    const plan = JSON.parse(await readFile(join(cache, "verify", plans[0]!), "utf8")) as { preload: string[]; blocked?: string[]; standIns?: string[] };
    expect(plan.preload).toEqual(expect.arrayContaining(["pickle", "statistics"]));
    expect(plan.blocked).toContain("_pickle");
    expect(plan.standIns).toContain("fractions");
  });

  it("the fork server is not started with a variable that names the first run's own folders (torch 2 sets its cache folder under TMPDIR at import)", async () => {
    const cache = await makeTempDir("verify-own-folders");
    const taskDir = await copyTask(await makeTempDir("verify-own-folders-task"), "pref-loss");
    // setdefault, as torch does: a child that starts with the variable keeps it
    await writeFile(
      join(taskDir, "tests", "conftest.py"),
      'import os\nimport tempfile\n\nos.environ.setdefault("LMR_T_CACHE", os.path.join(tempfile.gettempdir(), "cache"))\nos.environ["LMR_T_FLAG"] = "1"\n',
    );
    await writeFile(
      join(taskDir, "tests", "test_own_folders.py"),
      'import os\nimport tempfile\n\n\ndef test_the_cache_folder_is_this_runs():\n    assert os.environ["LMR_T_CACHE"] == os.path.join(tempfile.gettempdir(), "cache")\n    assert os.environ["LMR_T_FLAG"] == "1"\n',
    );
    const manifest = JSON.parse(await readFile(join(taskDir, "task.json"), "utf8")) as { tests: { files: string[] } };
    manifest.tests.files.push("tests/conftest.py", "tests/test_own_folders.py");
    await writeFile(join(taskDir, "task.json"), JSON.stringify(manifest, null, 2));
    const r = await runCli(["verify", taskDir, "--runs", "3", "--mutants", "0", "--no-write", "-j", "1", "--sandbox", "none", "--json"], {
      env: { LMR_CACHE: cache },
    });
    const runs = (jsonData(r.stdout) as Output).tasks[0]!.steps.reference.runs;
    expect(runs.map((x) => x.status)).toEqual(["passed", "passed", "passed"]);
    const { readdir } = await import("node:fs/promises");
    const plans = (await readdir(join(cache, "verify"))).filter((n) => n.startsWith("server-plan-"));
    expect(plans).toHaveLength(1);
    expect(JSON.parse(await readFile(join(cache, "verify", plans[0]!), "utf8"))).toMatchObject({ envChanges: { set: { LMR_T_FLAG: "1" } } });
    expect(await readFile(join(cache, "verify", plans[0]!), "utf8")).not.toContain("LMR_T_CACHE");
  });

  it("a remembered server plan runs reference run 1 in the fork server with a fresh run's outcomes; a plan that no longer holds falls back and is written again", async () => {
    const cache = await makeTempDir("verify-plan-cache");
    const env = { LMR_CACHE: cache };
    const args = [
      join("examples", "tasks", "pref-loss"),
      "--runs",
      "2",
      "--mutants",
      "6",
      "--no-write",
      "-j",
      "2",
      "--sandbox",
      "none",
      "--no-dataset-scan",
      "--json",
    ];
    const once = async (): Promise<VerificationRecord> => {
      const r = await runCli(["verify", ...args], { env });
      expect(r.exitCode, r.stderr).toBe(0);
      return (jsonData(r.stdout) as Output).tasks[0]!;
    };
    const facts = (rec: VerificationRecord) => ({
      reference: rec.steps.reference.runs.map((x) => [x.status, x.passed, x.failed]),
      stub: rec.steps.stub.ok,
      mutants: [rec.steps.mutants.total, rec.steps.mutants.killed, rec.steps.mutants.survivors.map((x) => x.id)],
      environment: rec.steps.environment?.ok,
    });
    const planDir = join(cache, "verify");
    const planFile = async (): Promise<string> => {
      const { readdir } = await import("node:fs/promises");
      const names = (await readdir(planDir)).filter((n) => n.startsWith("server-plan-"));
      expect(names).toHaveLength(1);
      return join(planDir, names[0]!);
    };
    const fresh = await once(); // no plan: run 1 is a fresh process, and its imports make the plan
    const file = await planFile();
    const plan = JSON.parse(await readFile(file, "utf8")) as { preload: string[] };
    expect(plan.preload).toContain("pytest"); // what the tests import from outside the tree
    const { stat } = await import("node:fs/promises");
    const written = (await stat(file)).mtimeMs;
    const remembered = await once(); // the plan holds: run 1 ran in the server, so nothing was written
    expect(facts(remembered)).toEqual(facts(fresh));
    expect((await stat(file)).mtimeMs).toBe(written);
    await writeFile(file, JSON.stringify({ preload: ["json"] }));
    const stale = await once(); // run 1 in that server imports what the plan lacks: the fresh run decides, and the plan is written again
    expect(facts(stale)).toEqual(facts(fresh));
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual(plan);
  });

  it("a cold cache starts the fork servers from the plan the committed record carries; a committed plan that does not hold falls back to a fresh run 1", async () => {
    const taskDir = await copyTask(await makeTempDir("verify-committed-plan"), "pref-loss");
    const args = [taskDir, "--runs", "2", "--mutants", "6", "-j", "2", "--sandbox", "none", "--no-dataset-scan", "--force", "--json"];
    const once = async (extra: string[] = []): Promise<VerificationRecord> => {
      const r = await runCli(["verify", ...args, ...extra], { env: { LMR_CACHE: await makeTempDir("verify-cold-cache") } });
      expect(r.exitCode, r.stderr).toBe(0);
      return (jsonData(r.stdout) as Output).tasks[0]!;
    };
    const facts = (rec: VerificationRecord) => ({
      reference: rec.steps.reference.runs.map((x) => [x.status, x.passed, x.failed]),
      stub: rec.steps.stub.ok,
      mutants: [rec.steps.mutants.total, rec.steps.mutants.killed],
    });
    // the copy comes with the example's committed record, whose plan would start the servers
    await rm(join(taskDir, "verification.json"), { force: true });
    const learned = await once(); // no plan anywhere: run 1 is fresh, and the written record carries its plan
    expect(learned.steps.reference.plan_source).toBe("first-run");
    const file = join(taskDir, "verification.json");
    const written = JSON.parse(await readFile(file, "utf8")) as VerificationRecord;
    expect(written.environment.server_plan?.preload).toContain("pytest");
    const fromRecord = await once(); // an empty cache, as on a fresh clone: the committed plan starts the servers
    expect(fromRecord.steps.reference.plan_source).toBe("record");
    expect(facts(fromRecord)).toEqual(facts(learned));
    await writeFile(file, JSON.stringify({ ...written, environment: { ...written.environment, server_plan: { preload: ["json"] } } }, null, 2) + "\n");
    const stale = await once(["--no-write"]);
    expect(stale.steps.reference.plan_source).toBe("first-run");
    expect(facts(stale)).toEqual(facts(learned));
  });

  it("validate and verify reject an instruction that still holds TODO(author) markers", async () => {
    const taskDir = await copyTask(await makeTempDir("verify-todo"), "pref-loss");
    const instruction = join(taskDir, "instruction.md");
    await writeFile(instruction, (await readFile(instruction, "utf8")) + "\nTODO(author): say which edge cases the tests check.\n");
    const v = await runCli(["validate", taskDir]);
    expect(v.exitCode).toBe(1);
    expect(v.stdout + v.stderr).toMatch(/TODO\(author\) marker\(s\), at line\(s\) \d+/);
    const { exitCode, out } = await verify([taskDir, ...FAST]);
    expect(exitCode).toBe(1);
    expect(out.tasks[0]!.failure?.step).toBe("manifest");
  });
});
