import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CallsFile } from "../../src/record/calls.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { buildTask, copyTaskWithoutRecord, pythonWith, RECORD_FIXTURES, runReplay } from "./helpers.js";

afterAll(removeTempDirs);

/** A task over test/fixtures/record/inplace-upstream (built on pref-loss's manifest). */
async function inplaceTask(label: string, targets: { file: string; symbol: string }[]): Promise<string> {
  const root = await makeTempDir(label);
  return copyTaskWithoutRecord(root, "pref-loss", async (m) => {
    await cp(join(RECORD_FIXTURES, "inplace-upstream"), join(root, "upstreams", "inplace"), { recursive: true });
    m.upstream.path = "../../upstreams/inplace";
    m.targets = targets.map((t) => ({ ...t, mode: "body" }));
    m.context_files = [];
    delete m.verification;
    delete m.workspace; // it names files of the example's own upstream
  });
}

const numpyPython = await pythonWith(["numpy"]);

describe("in-place changes of arguments", () => {
  it("records arguments as they were before the call, the change after it, and replays both", async () => {
    const taskDir = await inplaceTask("record-inplace", [
      { file: "ops.py", symbol: "normalize_" },
      { file: "ops.py", symbol: "add_counts" },
    ]);
    const driver = [
      "from ops import normalize_, add_counts",
      "w = [1.0, 3.0]",
      "normalize_(w)",
      "normalize_(w, total=10.0)",
      "c = {}",
      'add_counts(c, ["b", "a", "b"])',
      "add_counts(c, [])",
      "",
    ].join("\n");
    const rec = await runCli(["record", taskDir, "--driver", driver]);
    expect(rec.exitCode, rec.stderr).toBe(0);
    const calls = JSON.parse(await readFile(join(taskDir, "fixtures/calls.json"), "utf8")) as CallsFile;
    const [norm, counts] = calls.targets;
    expect(norm!.calls[0]).toMatchObject({ args: [[1.0, 3.0]], result: 4.0, mutated: { args: { "0": [0.25, 0.75] }, kwargs: {} } });
    expect(norm!.calls[1]).toMatchObject({ args: [[0.25, 0.75]], kwargs: { total: 10.0 }, mutated: { args: { "0": [2.5, 7.5] } } });
    // insertion order b, a is kept although JSON keys are sorted
    expect(counts!.calls[0]!.mutated!.args["0"]).toEqual({
      __lmr__: "dict",
      items: [
        ["b", 2],
        ["a", 1],
      ],
    });
    expect(counts!.calls[1]!.mutated).toBeUndefined();

    expect((await runCli(["scaffold", "tests", taskDir])).exitCode).toBe(0);
    const testFile = "tests/test_pref_loss_replay.py";
    const built = await buildTask(taskDir);
    expect((await runReplay(built, testFile, built.reference)).status).toBe("passed");
    const stub = await runReplay(built, testFile, undefined);
    expect(stub.counts).toMatchObject({ passed: 0, failed: 4, errors: 0 });

    // right return value, but the list is left as it was
    const forgetful = built.reference["ops.py"]!.replace("        weights[i] = w * total / old\n", "        pass\n");
    expect(forgetful).not.toBe(built.reference["ops.py"]);
    const r = await runReplay(built, testFile, { "ops.py": forgetful });
    const failed = r.tests.filter((t) => t.status === "failed");
    expect(failed.map((t) => t.id.replace(/^.*::/, ""))).toEqual([
      "test_normalize_matches_recorded_call[call-000]",
      "test_normalize_matches_recorded_call[call-001]",
    ]);
    expect(failed[0]!.message).toContain("call 0, argument 'weights' after the call [0]: expected 0.25, got 1.0");
  });
});

describe("record.check_mutations: false", () => {
  it("writes replay tests that skip that target's in-place checks, and only that target's", async () => {
    const root = await makeTempDir("record-no-mutations");
    const taskDir = await copyTaskWithoutRecord(root, "pref-loss", async (m) => {
      await cp(join(RECORD_FIXTURES, "inplace-upstream"), join(root, "upstreams", "inplace"), { recursive: true });
      m.upstream.path = "../../upstreams/inplace";
      m.targets = [
        { file: "ops.py", symbol: "normalize_", mode: "body", record: { check_mutations: false } },
        { file: "ops.py", symbol: "add_counts", mode: "body", record: { check_mutations: true } },
      ];
      m.context_files = [];
      delete m.verification;
      delete m.workspace; // it names files of the example's own upstream
    });
    expect((await runCli(["validate", taskDir])).exitCode).toBe(0);
    const driver = 'from ops import normalize_, add_counts\nw = [1.0, 3.0]\nnormalize_(w)\nadd_counts({}, ["a"])\n';
    const rec = await runCli(["record", taskDir, "--driver", driver]);
    expect(rec.exitCode, rec.stderr).toBe(0);
    // the recording is the same either way: the setting is for the tests
    const calls = JSON.parse(await readFile(join(taskDir, "fixtures/calls.json"), "utf8")) as CallsFile;
    expect(calls.targets[0]!.calls[0]!.mutated).toEqual({ args: { "0": [0.25, 0.75] }, kwargs: {} });

    expect((await runCli(["scaffold", "tests", taskDir])).exitCode).toBe(0);
    const testFile = "tests/test_pref_loss_replay.py";
    const source = await readFile(join(taskDir, testFile), "utf8");
    expect(source).toContain("replay(NORMALIZE, call, check_mutations=False)\n");
    expect(source).toContain("replay(ADD_COUNTS, call)\n");
    expect(source).toContain('"record": {"check_mutations": false}');

    const built = await buildTask(taskDir);
    expect((await runReplay(built, testFile, built.reference)).status).toBe("passed");
    // right return value, list left as it was: passes now
    const forgetful = built.reference["ops.py"]!.replace("        weights[i] = w * total / old\n", "        pass\n");
    expect(forgetful).not.toBe(built.reference["ops.py"]);
    const kept = await runReplay(built, testFile, { "ops.py": forgetful });
    expect(kept.status, kept.log).toBe("passed");
    // add_counts still has its in-place change checked
    const lazy = built.reference["ops.py"]!.replace("        counts[token] = counts.get(token, 0) + 1\n", "        pass\n");
    expect(lazy).not.toBe(built.reference["ops.py"]);
    const r = await runReplay(built, testFile, { "ops.py": lazy });
    expect(r.tests.filter((t) => t.status === "failed").map((t) => t.id.replace(/^.*::/, ""))).toEqual(["test_add_counts_matches_recorded_call[call-000]"]);
  });
});

describe.skipIf(!numpyPython)(`numpy arrays through calls.npz (${numpyPython ?? "skipped: no interpreter here imports numpy"})`, () => {
  it("writes byte-identical calls.json and calls.npz, lists the npz, replays arrays by shape, dtype and value", async () => {
    const py = numpyPython!;
    const taskDir = await inplaceTask("record-numpy", [
      { file: "npops.py", symbol: "clip_" },
      { file: "npops.py", symbol: "softmax" },
    ]);
    await writeFile(
      join(taskDir, "driver.py"),
      [
        "import numpy as np",
        "from npops import clip_, softmax",
        "for i in range(3):",
        "    x = np.random.normal(size=(2, 4))",
        "    clip_(x, -0.5, 0.5)",
        "    softmax(np.random.normal(size=(3, 5)), temperature=0.5 + i)",
        "",
      ].join("\n"),
    );
    const record = () => runCli(["record", taskDir, "--driver-file", "driver.py", "--python", py, "--json"]);
    const first = await record();
    expect(first.exitCode, first.stderr).toBe(0);
    expect(jsonData(first.stdout).files).toEqual(["fixtures/calls.json", "fixtures/calls.npz"]);
    const json1 = await readFile(join(taskDir, "fixtures/calls.json"));
    const npz1 = await readFile(join(taskDir, "fixtures/calls.npz"));
    expect((await record()).exitCode).toBe(0);
    expect((await readFile(join(taskDir, "fixtures/calls.json"))).equals(json1)).toBe(true);
    expect((await readFile(join(taskDir, "fixtures/calls.npz"))).equals(npz1)).toBe(true);

    const calls = JSON.parse(json1.toString("utf8")) as CallsFile;
    expect(calls.arrays).toBe("calls.npz");
    expect(calls.seeded).toContain("numpy");
    expect(calls.targets[0]!.calls[0]!.args[0]).toMatchObject({ __lmr__: "ndarray", dtype: "float64", shape: [2, 4] });
    expect(calls.targets[0]!.calls[0]!.mutated!.args["0"]).toMatchObject({ __lmr__: "ndarray", shape: [2, 4] });
    expect(calls.targets[1]!.calls[0]!.result).toMatchObject({ __lmr__: "ndarray", dtype: "float32", shape: [3, 5] });

    const scaffold = await runCli(["scaffold", "tests", taskDir]);
    expect(scaffold.exitCode, scaffold.stderr).toBe(0);
    const manifest = JSON.parse(await readFile(join(taskDir, "task.json"), "utf8"));
    expect(manifest.tests.fixtures).toEqual(["fixtures/preference_cases.json", "fixtures/calls.json", "fixtures/calls.npz"]);

    const testFile = "tests/test_pref_loss_replay.py";
    const built = await buildTask(taskDir);
    const reference = await runReplay(built, testFile, built.reference, py);
    expect(reference.status, reference.log).toBe("passed");
    expect(reference.counts.passed).toBe(6);
    const stub = await runReplay(built, testFile, undefined, py);
    expect(stub.counts).toMatchObject({ passed: 0, failed: 6, errors: 0 });
    // float64 instead of float32: caught by the dtype check
    const wide = built.reference["npops.py"]!.replace(".astype(np.float32)", "");
    const r = await runReplay(built, testFile, { "npops.py": wide }, py);
    expect(r.tests.filter((t) => t.status === "failed").length).toBe(3);
    expect(r.tests.find((t) => t.status === "failed")!.message).toContain("return value: expected dtype float32, got dtype float64");
  });
});
