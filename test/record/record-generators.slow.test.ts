import { execa } from "execa";
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData, jsonEnvelope } from "../helpers/run-cli.js";
import { copyTaskWithoutRecord, pythonWith, RECORD_FIXTURES } from "./helpers.js";

afterAll(removeTempDirs);

/*
 * Fixtures anyone can regenerate: record.generators (scripts run like the driver, writing
 * exactly their outputs into $LMR_FIXTURES_OUT), `lmr record --check` (regenerate and
 * compare byte for byte), and the validate checks that every file under fixtures/ has a maker.
 */

const numpyPython = await pythonWith(["numpy"]);

// Checks the contract from inside: run from the tree root, seeded, with LMR_FIXTURES_OUT set.
const GENERATOR = `"""Writes fixtures/table.json: softmax of the reference on seeded inputs."""
import json
import os

import numpy as np

from npops import softmax

assert os.path.exists("npops.py"), os.getcwd()  # the tree root
out = os.environ["LMR_FIXTURES_OUT"]
rows = np.random.normal(size=(3, 4))  # numpy is seeded by lmr
table = {"rows": [[round(float(v), 12) for v in row] for row in softmax(rows, temperature=0.5)]}
with open(os.path.join(out, "fixtures", "table.json"), "w") as f:
    f.write(json.dumps(table, indent=1, sort_keys=True) + "\\n")
`;
const DRIVER = `import numpy as np
from npops import clip_, softmax
for i in range(2):
    clip_(np.random.normal(size=(2, 3)), -0.5, 0.5)
    softmax(np.random.normal(size=(2, 3)), temperature=1.0 + i)
`;

async function generatorTask(label: string, record: Record<string, unknown>): Promise<string> {
  const root = await makeTempDir(label);
  const taskDir = await copyTaskWithoutRecord(root, "pref-loss", async (m) => {
    await cp(join(RECORD_FIXTURES, "inplace-upstream"), join(root, "upstreams", "inplace"), { recursive: true });
    m.upstream.path = "../../upstreams/inplace";
    m.targets = [
      { file: "npops.py", symbol: "clip_", mode: "body" },
      { file: "npops.py", symbol: "softmax", mode: "body" },
    ];
    m.context_files = [];
    m.tests.fixtures = ["fixtures"];
    m.record = record;
    delete m.verification;
    delete m.workspace;
  });
  await rm(join(taskDir, "fixtures", "preference_cases.json"));
  await mkdir(join(taskDir, "generators"), { recursive: true });
  await writeFile(join(taskDir, "generators", "table.py"), GENERATOR);
  await writeFile(join(taskDir, "driver.py"), DRIVER);
  return taskDir;
}

const TABLE = { script: "generators/table.py", outputs: ["fixtures/table.json"] };

describe.skipIf(!numpyPython)(`record.generators and lmr record --check (${numpyPython ?? "skipped: no interpreter here imports numpy"})`, () => {
  const py = numpyPython!;
  let taskDir: string;
  const check = (...extra: string[]) => runCli(["record", "--check", taskDir, "--python", py, ...extra]);

  beforeAll(async () => {
    taskDir = await generatorTask("record-generators", { driver: "driver.py", generators: [TABLE] });
  });

  it("validate reports a declared output that was never generated; lmr record generates it with the driver's files", async () => {
    const before = await runCli(["validate", taskDir]);
    expect(before.exitCode).toBe(1);
    expect(before.stdout).toContain("/record/generators/0/outputs/0: 'fixtures/table.json' does not exist: generators/table.py has not been run");

    const rec = await runCli(["record", taskDir, "--python", py, "--json"]);
    expect(rec.exitCode, rec.stderr).toBe(0);
    const out = jsonData(rec.stdout);
    expect(out.files).toEqual(["fixtures/calls.json", "fixtures/calls.npz", "fixtures/table.json"]);
    expect(out.generators).toMatchObject([{ script: "generators/table.py", outputs: ["fixtures/table.json"] }]);
    expect(JSON.parse(await readFile(join(taskDir, "fixtures/table.json"), "utf8")).rows).toHaveLength(3);
    const text = await runCli(["record", taskDir, "--python", py]);
    expect(text.stdout).toContain("  generators/table.py: fixtures/table.json in ");
    expect((await runCli(["validate", taskDir])).exitCode).toBe(0);
  });

  it("--check: identical fixtures exit 0", async () => {
    const r = await check();
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/: identical \(fixtures\/calls\.json, fixtures\/calls\.npz, fixtures\/table\.json\) in [\d.]+ s/);
  });

  it("--check: a hand-edited JSON fixture exits 1 naming the file, the line and the JSON pointer", async () => {
    const path = join(taskDir, "fixtures/table.json");
    const good = await readFile(path, "utf8");
    const table = JSON.parse(good) as { rows: number[][] };
    const edited = good.replace(JSON.stringify(table.rows[1]![2]), "0.25");
    expect(edited).not.toBe(good);
    await writeFile(path, edited);
    const line = good.split("\n").findIndex((l) => l.includes(JSON.stringify(table.rows[1]![2]))) + 1;
    const r = await check();
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain("1 fixture file differs");
    expect(r.stdout).toContain(`/fixtures/table.json: line ${line}, /rows/1/2: committed 0.25, regenerated ${table.rows[1]![2]}`);
    const envelope = jsonEnvelope((await check("--json")).stdout);
    expect(envelope).toMatchObject({ ok: false, error: { code: "record/fixtures-differ" } });
    const j = envelope.data;
    expect(j.results[0]).toMatchObject({
      task_id: "pref-loss",
      status: "different",
      differences: [{ file: "fixtures/table.json", kind: "changed", line, json_pointer: "/rows/1/2" }],
    });
    await writeFile(path, good);
  });

  it("--check: in calls.json, names the target and the call; in calls.npz, the member and the element", async () => {
    const jsonPath = join(taskDir, "fixtures/calls.json");
    const good = await readFile(jsonPath, "utf8");
    await writeFile(jsonPath, good.replace('"calls_seen": 2', '"calls_seen": 3'));
    const r = await check();
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(/fixtures\/calls\.json: line \d+, \/targets\/0\/calls_seen \(clip_\): committed 3, regenerated 2/);
    await writeFile(jsonPath, good);

    // the same member name, one value changed: as if someone edited the arrays by hand
    const npzPath = join(taskDir, "fixtures/calls.npz");
    const npz = await readFile(npzPath);
    const edit = [
      "import io, sys, numpy as np, zipfile",
      "sys.path.insert(0, sys.argv[2])",
      "from lmr_record import encode",
      "with np.load(sys.argv[1]) as f: arrays = {k: f[k] for k in f.files}",
      "key = sorted(arrays)[1]",
      "a = arrays[key].copy(); a.reshape(-1)[-1] += 1; arrays[key] = a",
      "open(sys.argv[1], 'wb').write(encode.npz_bytes(arrays)); print(key)",
    ].join("\n");
    const key = (await execa(py, ["-c", edit, npzPath, join(REPO_ROOT, "python")])).stdout.trim();
    const r2 = await check("--json");
    expect(r2.exitCode).toBe(1);
    const diff = jsonData(r2.stdout).results[0].differences[0];
    expect(diff).toMatchObject({ file: "fixtures/calls.npz", kind: "changed", member: `${key}.npy` });
    expect(diff.message).toMatch(
      new RegExp(
        `^member ${key}\\.npy: first difference at element 5 \\(index \\(1, 2\\) of shape \\(2, 3\\), dtype <f[48]\\); the regenerated calls.json uses it at /targets/\\d/calls/\\d/`,
      ),
    );
    await writeFile(npzPath, npz);
    expect((await check()).exitCode).toBe(0);
  });

  it("--check and validate: a committed file nothing makes, and a missing one", async () => {
    await writeFile(join(taskDir, "fixtures", "notes.json"), "{}\n");
    const v = await runCli(["validate", taskDir]);
    expect(v.exitCode).toBe(1);
    expect(v.stdout).toContain("/record: 'fixtures/notes.json' is not made by record.driver or any record.generators entry");
    expect(v.stdout).toContain('"record": {"generators": [{"script": "generators/notes.py", "outputs": ["fixtures/notes.json"]}]}');
    const table = await readFile(join(taskDir, "fixtures/table.json"));
    await rm(join(taskDir, "fixtures/table.json"));
    const r = jsonData((await check("--json")).stdout).results[0];
    expect(r.differences.map((d: { file: string; kind: string }) => [d.file, d.kind])).toEqual([
      ["fixtures/notes.json", "unclaimed"],
      ["fixtures/table.json", "missing"],
    ]);
    await rm(join(taskDir, "fixtures", "notes.json"));
    await writeFile(join(taskDir, "fixtures/table.json"), table);
  });

  it("a generator that writes another file, misses its output or raises stops lmr record (exit 2) and writes nothing", async () => {
    const before = await readFile(join(taskDir, "fixtures/calls.json"));
    const script = join(taskDir, "generators", "table.py");
    const cases: [string, string][] = [
      [
        GENERATOR + 'open(os.path.join(out, "fixtures", "debug.txt"), "w").write("x")\n',
        "generators/table.py wrote fixtures/debug.txt, which is not one of its outputs in task.json",
      ],
      [
        GENERATOR.replace(
          'with open(os.path.join(out, "fixtures", "table.json"), "w") as f:\n    f.write(json.dumps(table, indent=1, sort_keys=True) + "\\n")\n',
          "",
        ),
        "generators/table.py did not write fixtures/table.json (it runs with LMR_FIXTURES_OUT set and writes $LMR_FIXTURES_OUT/fixtures/table.json)",
      ],
      [GENERATOR + 'raise ValueError("no table today")\n', "the generator generators/table.py raised ValueError: no table today"],
    ];
    for (const [text, message] of cases) {
      expect(text).not.toBe(GENERATOR);
      await writeFile(script, text);
      const r = await runCli(["record", taskDir, "--python", py]);
      expect(r.exitCode, r.stdout).toBe(2);
      expect(r.stderr).toContain(message);
      expect((await readFile(join(taskDir, "fixtures/calls.json"))).equals(before)).toBe(true);
      // --check reports it as a task it cannot regenerate
      const c = jsonData((await check("--json")).stdout).results[0];
      expect(c.status).toBe("failed");
    }
    await writeFile(script, GENERATOR);
  });

  it("a task with generators only; an output the grader never gets; several tasks at once", async () => {
    const only = await generatorTask("record-generators-only", { generators: [TABLE] });
    const r = await runCli(["record", only, "--python", py, "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(jsonData(r.stdout)).toMatchObject({ files: ["fixtures/table.json"], targets: [] });

    const manifestPath = join(only, "task.json");
    const m = JSON.parse(await readFile(manifestPath, "utf8"));
    m.tests.fixtures = ["fixtures/calls.json"];
    await writeFile(manifestPath, JSON.stringify(m, null, 2));
    const v = await runCli(["validate", only]);
    expect(v.stdout).toContain("/record/generators/0/outputs/0: 'fixtures/table.json' is not in tests.fixtures, so graders never get it");
    m.tests.fixtures = ["fixtures"];
    await writeFile(manifestPath, JSON.stringify(m, null, 2));

    const both = await runCli(["record", "--check", only, taskDir, "--python", py, "--json"]);
    expect(both.exitCode, both.stdout).toBe(0);
    expect(jsonData(both.stdout).results.map((x: { status: string }) => x.status)).toEqual(["identical", "identical"]);
    const usage = await runCli(["record", "--check", only, "--seed", "3"]);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr).toContain("--check regenerates fixtures as task.json says; --seed does not apply");
    const two = await runCli(["record", only, taskDir]);
    expect(two.exitCode).toBe(2);
    expect(two.stderr).toContain("lmr record records one task at a time, got 2");
  });
});
