import { execa } from "execa";
import { cp, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Defect } from "../../src/interop/types.js";
import type { TaskManifest } from "../../src/manifest/types.js";
import { REPO_ROOT, makeTempDir, pythonBin, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonEnvelope } from "../helpers/run-cli.js";

afterAll(removeTempDirs);

const FIXTURE = join(REPO_ROOT, "test", "fixtures", "lmr-bench");
const BENCH = join(FIXTURE, "benchmark");
const MAP = join(FIXTURE, "commit-map.json");
const TRAINING = "Training Objectives & Optimization Techniques";

/** Every planted defect (fixture README): folder, key, repaired. */
const PLANTED: [string, string, boolean][] = [
  ["1-PrefOpt", "/repo_url", true],
  ["1-PrefOpt", "/implementations/0/id", true],
  ["1-PrefOpt", "/implementations/0/retrieval_content", true],
  ["1-PrefOpt", "/implementations/0/retrieval_content/1", true],
  ["1-PrefOpt", "/implementations/1/id", true],
  ["1-PrefOpt", "/implementations/1/category", true],
  ["1-PrefOpt", "/implementations/1/unit_test_file", false],
  ["1-PrefOpt", "/repo_folder_name", true],
  ["2-BeamTrim", "/paper", true],
  ["2-BeamTrim", "/repo_url", true],
  ["2-BeamTrim", "/repo_folder_name", true],
  ["2-BeamTrim", "/implementations/0/goal_function", false],
  ["2-BeamTrim", "/implementations/1/goal_file", true],
  ["2-BeamTrim", "/implementations/1/class_name", true],
  ["2-BeamTrim", "/implementations/2/goal_function", false],
  ["3-ProbeKit", "/repo_folder_name", true],
  ["3-ProbeKit", "/implementations/0/category", true],
  ["3-ProbeKit", "/repo_url", false],
];

interface ImportJson {
  ok: boolean;
  tasks: string[];
  written: string[];
  skipped: { folder: string; id?: string; reason: string }[];
  defects: Defect[];
}

async function importJson(out: string, ...extra: string[]): Promise<{ exitCode: number; body: ImportJson; stderr: string }> {
  const r = await runCli(["import", "lmr-bench", BENCH, "--out", out, "--commit-map", MAP, "--json", ...extra]);
  const envelope = jsonEnvelope<ImportJson>(r.stdout);
  return { exitCode: r.exitCode, body: { ...envelope.data!, ok: envelope.ok }, stderr: r.stderr };
}

async function readManifest(dir: string): Promise<TaskManifest> {
  return JSON.parse(await readFile(join(dir, "task.json"), "utf8")) as TaskManifest;
}

describe("lmr import lmr-bench on the fixture benchmark", () => {
  let out: string;
  let result: ImportJson;
  let exitCode: number;

  beforeAll(async () => {
    out = join(await makeTempDir("import"), "tasks");
    ({ exitCode, body: result } = await importJson(out, "--default-category", TRAINING));
  });

  it("writes the complete tasks and exits 1 for the defects it could not repair", async () => {
    expect(exitCode).toBe(1);
    expect(result.ok).toBe(false);
    expect(result.tasks).toEqual(["prefopt-pairwise-loss", "prefopt-score", "beamtrim-prune"]);
    expect((await readdir(out)).sort()).toEqual(["beamtrim-prune", "prefopt-pairwise-loss", "prefopt-score"]);
    expect(result.skipped.map((s) => s.folder.split("/").pop())).toEqual(["2-BeamTrim", "2-BeamTrim", "3-ProbeKit"]);
  });

  it("reports each planted defect by folder and key, repaired or not, and nothing else", () => {
    const seen = result.defects.map((d) => [d.folder.split("/").pop(), d.key, d.repaired]);
    expect(seen.sort()).toEqual([...PLANTED].sort());
    for (const d of result.defects) expect(d.message.length).toBeGreaterThan(10);
  });

  it("maps info.json to the manifest: id, target, upstream (branch stripped), licence, requirements, context", async () => {
    const m = await readManifest(join(out, "prefopt-pairwise-loss"));
    expect(m).toMatchObject({
      id: "prefopt-pairwise-loss",
      paper: { title: "Pairwise Preference Objectives for Tiny Models", url: "https://example.org/papers/pref-opt", year: 2025 },
      category: TRAINING,
      upstream: { repo: "https://git.example.org/lmr-fixture/pref-opt", commit: "3f6c1d2e9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d", license: "MIT" },
      targets: [{ file: "losses.py", symbol: "pairwise_loss", mode: "body" }],
      tests: { files: ["tests/test_prefopt_pairwise_loss.py"] },
      environment: { python: "3.11", requirements: ["numpy>=1.24", "pytest"], gpu: false, network: false },
      context_files: ["utils.py"],
    });
    expect(m.provenance.notes).toContain('branch "dev"');
    expect((await readManifest(join(out, "prefopt-score"))).targets).toEqual([{ file: "losses.py", symbol: "MarginScorer.score", mode: "body" }]);
    const beam = await readManifest(join(out, "beamtrim-prune"));
    expect(beam).toMatchObject({
      paper: { title: "Trimming Beams Early for Cheaper Decoding", url: "https://example.org/papers/beam-trim", year: 2024 },
      upstream: { repo: "https://git.example.org/lmr-fixture/beam-trim", license: "NOASSERTION" },
      targets: [{ file: "search.py", symbol: "BeamState.prune", mode: "body" }],
      context_files: ["scoring.py"],
    });
  });

  it("copies no benchmark text: the instruction is a placeholder with the signature, the test fails on purpose", async () => {
    const dir = join(out, "beamtrim-prune");
    const instruction = await readFile(join(dir, "instruction.md"), "utf8");
    expect(instruction).toMatch(/^# TODO: write the instruction in our own words\n/);
    expect(instruction).toContain("def prune(self, alpha=0.6):");
    for (const task of await readdir(out)) {
      for (const f of ["instruction.md", "task.json"]) expect(await readFile(join(out, task, f), "utf8")).not.toContain("Fixture text");
    }
    const validate = await runCli(["validate", join(out, "beamtrim-prune"), join(out, "prefopt-pairwise-loss"), join(out, "prefopt-score")]);
    expect(validate.exitCode).toBe(0);
    const py = await execa(pythonBin(), ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], { cwd: dir, reject: false, all: true });
    expect(py.exitCode).toBe(1);
    expect(String(py.all)).toContain("grader tests not written yet");
  });

  it("prints one line per defect in the documented format, then a summary", async () => {
    const r = await runCli(["import", "lmr-bench", BENCH, "--out", join(await makeTempDir("import-text"), "t"), "--commit-map", MAP]);
    expect(r.exitCode).toBe(1);
    const lines = r.stdout.split("\n");
    expect(lines).toContain(
      `${BENCH}/1-PrefOpt/info.json: /implementations/0/retrieval_content: key 'retrieval_content' read as 'retrieval_context' (repaired)`,
    );
    expect(lines).toContain(
      `${BENCH}/1-PrefOpt/info.json: /implementations/1/category: category missing; give --default-category or fix info.json (not repaired)`,
    );
    expect(r.stdout).toMatch(/imported 2 tasks into .*; 18 defects \(13 repaired, 5 not repaired\); 4 skipped/);
  });

  it("never overwrites an existing task folder unless --force", async () => {
    const dir = join(out, "prefopt-pairwise-loss");
    await writeFile(join(dir, "instruction.md"), "written by a person\n");
    const again = await importJson(out, "--default-category", TRAINING);
    expect(again.exitCode).toBe(1);
    expect(again.body.tasks).toEqual([]);
    expect(again.body.defects.filter((d) => d.message.includes("already exists")).map((d) => d.key)).toEqual([
      "/implementations/0",
      "/implementations/1",
      "/implementations/1",
    ]);
    expect(await readFile(join(dir, "instruction.md"), "utf8")).toBe("written by a person\n");
    const forced = await importJson(out, "--default-category", TRAINING, "--force");
    expect(forced.body.tasks).toHaveLength(3);
    expect(await readFile(join(dir, "instruction.md"), "utf8")).toContain("TODO");
    expect((await readdir(out)).filter((n) => n.startsWith("."))).toEqual([]);
  });

  it("writes nothing with --dry-run", async () => {
    const dry = join(await makeTempDir("import-dry"), "tasks");
    const r = await importJson(dry, "--default-category", TRAINING, "--dry-run");
    expect(r.body.tasks).toHaveLength(3);
    expect(r.body.written).toEqual([]);
    expect(
      await stat(dry).then(
        () => readdir(dry),
        () => [],
      ),
    ).toEqual([]);
  });

  it("imports a single paper folder, and a folder with everything known exits 0", async () => {
    const root = await makeTempDir("import-one");
    await cp(join(BENCH, "1-PrefOpt"), join(root, "1-PrefOpt"), { recursive: true });
    const info = JSON.parse(await readFile(join(root, "1-PrefOpt", "info.json"), "utf8"));
    info.implementations = [info.implementations[0]];
    info.implementations[0].retrieval_context = ["utils.py"];
    delete info.implementations[0].retrieval_content;
    info.implementations[0].id = 1;
    info.repo_url = "https://git.example.org/lmr-fixture/pref-opt";
    await writeFile(join(root, "1-PrefOpt", "info.json"), JSON.stringify(info));
    await writeFile(join(root, "1-PrefOpt", "pref-opt", "requirements.txt"), "numpy\n");
    const r = await runCli(["import", "lmr-bench", join(root, "1-PrefOpt"), "--out", join(root, "tasks"), "--commit-map", MAP]);
    expect(r.stdout).toContain("imported 1 task");
    expect(r.stdout).toContain("0 defects");
    expect(r.exitCode).toBe(0);
  });

  it("rejects bad input with exit 2, naming the file and field", async () => {
    const tmp = await makeTempDir("import-bad");
    const missing = await runCli(["import", "lmr-bench", join(tmp, "nope"), "--out", join(tmp, "t")]);
    expect(missing.exitCode, missing.stderr).toBe(2);
    expect(missing.stderr).toContain("nope: not a folder");
    const empty = await runCli(["import", "lmr-bench", tmp, "--out", join(tmp, "t")]);
    expect(empty.exitCode).toBe(2);
    expect(empty.stderr).toContain("no paper folder with info.json");
    const badMap = join(tmp, "map.json");
    await writeFile(badMap, JSON.stringify({ "https://git.example.org/a/b": "abc123" }));
    const r = await runCli(["import", "lmr-bench", BENCH, "--out", join(tmp, "t"), "--commit-map", badMap]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${badMap}: /https:~1~1git.example.org~1a~1b: commit for https://git.example.org/a/b must be a full 40-hex SHA`);
    const cat = await runCli(["import", "lmr-bench", BENCH, "--out", join(tmp, "t"), "--default-category", "Decoding & Search Strategy"]);
    expect(cat.exitCode).toBe(2);
    expect(cat.stderr).toContain('did you mean "Decoding & Search Strategies"?');
    expect(
      await stat(join(tmp, "t")).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
  });
});
