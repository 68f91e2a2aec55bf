import { readFile, readdir, rename, rm, stat, symlink } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { combineGraderHash } from "../../src/bundle/build.js";
import { hashTree, listFiles } from "../../src/core/hash.js";
import type { BundleInfo, BundleManifest } from "../../src/bundle/types.js";
import { findLines, forbiddenEntries, listTree, maskedAwayLines } from "../helpers/bundle-checks.js";
import { EXAMPLE_TASKS, UPSTREAMS, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { copyTask } from "../helpers/task-copy.js";
import { runCli, runGrader, jsonData } from "../helpers/run-cli.js";

afterAll(removeTempDirs);

const TS_TASK_IDS = ["beam-search", "bpe-merge"];
const TASK_IDS = ["beam-search", "bpe-merge", "dpo-grad-region", "mcts-best-action", "pref-loss", "rouge-notebook", "trainer-class"];

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

async function readBundle(dir: string): Promise<BundleManifest> {
  return JSON.parse(await readFile(join(dir, "bundle.json"), "utf8")) as BundleManifest;
}

/** The task-input hash recomputed here from an explicit file list: what decides the bundle and what verify proves. */
async function taskHash(taskDir: string): Promise<string> {
  const m = JSON.parse(await readFile(join(taskDir, "task.json"), "utf8"));
  const files = ["task.json", m.instruction, ...(m.hints ? [m.hints] : []), ...m.tests.files, ...(m.tests.fixtures ?? [])];
  if (m.paper.text) files.push(m.paper.text);
  if (m.record?.driver) files.push(m.record.driver);
  for (const g of m.record?.generators ?? []) files.push(g.script);
  const alternatives = join(taskDir, "alternatives");
  if (await exists(alternatives)) for (const f of await listFiles(alternatives)) files.push(`alternatives/${f}`);
  return (await hashTree(taskDir, files)).hash;
}

describe("lmr build on the example tasks (local upstreams)", () => {
  let out: string;
  let infos: BundleInfo[];

  beforeAll(async () => {
    out = await makeTempDir("bundles");
    const r = await runCli(["build", "--tasks-dir", "examples/tasks", "--out", out, "--json"]);
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    infos = jsonData(r.stdout) as BundleInfo[];
  });

  it("builds one complete bundle per task and nothing else", async () => {
    expect(infos.map((i) => i.task_id)).toEqual(TASK_IDS);
    expect((await readdir(out)).sort()).toEqual(TASK_IDS);
    for (const id of TASK_IDS) {
      // alternatives/ sits beside grader/ for a task that has alternative solutions (every example does)
      const hasAlternatives = (await readdir(join(EXAMPLE_TASKS, id))).includes("alternatives");
      expect((await readdir(join(out, id))).sort()).toEqual([...(hasAlternatives ? ["alternatives"] : []), "bundle.json", "grader", "reference", "workspace"]);
    }
  });

  it("masks the pref-loss body but keeps its signature and docstring", async () => {
    const ws = join(out, "pref-loss", "workspace");
    const masked = await readFile(join(ws, "trainers.py"), "utf8");
    expect(masked).toContain("def preference_loss(\n    policy_chosen_logps: Sequence[float],");
    expect(masked).toContain('"""Per-pair DPO loss and implicit rewards for a batch of preference pairs.');
    expect(masked).toMatch(
      /\(losses, chosen_rewards, rejected_rewards\): three lists with one float per pair\.\n {4}"""\n\s+# TODO[^\n]*\n {4}raise NotImplementedError\n/,
    );
    expect(masked).not.toContain("reference_margin");
    // untouched code around the target stays
    expect(masked).toContain("class Trainer:");
    const reference = await readFile(join(out, "pref-loss", "reference", "trainers.py"));
    expect(reference.equals(await readFile(join(UPSTREAMS, "pref-trainer", "trainers.py")))).toBe(true);
  });

  it("puts the instruction, paper text, tests and fixtures where they belong", async () => {
    const bundle = join(out, "pref-loss");
    const task = join(EXAMPLE_TASKS, "pref-loss");
    for (const [inBundle, inTask] of [
      ["workspace/instruction.md", "instruction.md"],
      ["workspace/paper.json", "paper.json"],
      ["grader/tests/test_preference_loss.py", "tests/test_preference_loss.py"],
      ["grader/fixtures/preference_cases.json", "fixtures/preference_cases.json"],
    ] as const) {
      expect((await readFile(join(bundle, inBundle))).equals(await readFile(join(task, inTask)))).toBe(true);
    }
    expect(await listTree(join(bundle, "grader"))).toEqual(["fixtures/", "fixtures/preference_cases.json", "tests/", "tests/test_preference_loss.py"]);
    expect(await listTree(join(bundle, "reference"))).toEqual(["trainers.py"]);
  });

  it("leaves no reference code, VCS data, bytecode or checkpoints in any workspace", async () => {
    for (const info of infos) {
      const ws = join(info.dir, "workspace");
      const entries = await listTree(ws);
      expect(forbiddenEntries(entries)).toEqual([]);
      expect(entries.some((e) => e.startsWith("lmr_tests"))).toBe(false);
      for (const file of new Set(info.targets.map((t) => t.file))) {
        const gone = await maskedAwayLines(join(info.dir, "reference", file), join(ws, file));
        expect(gone.length, `${info.task_id}: masking removed nothing from ${file}`).toBeGreaterThan(0);
        expect(await findLines(ws, gone), info.task_id).toEqual([]);
      }
      expect(info.leaks).toEqual([]);
    }
  });

  it("applies the prepare steps before masking", async () => {
    const mcts = await readFile(join(out, "mcts-best-action", "workspace", "core", "mcts.py"), "utf8");
    expect(mcts).toMatch(/def find_best_action\(self, key, actions, priors\):/);
    expect(mcts).toContain("self.find_best_action(key, actions, priors)");
    expect(mcts).not.toContain("math.sqrt(total)");
    const rouge = join(out, "rouge-notebook");
    const metrics = await readFile(join(rouge, "workspace", "metrics.py"), "utf8");
    expect(metrics).not.toMatch(/^\s*[%!]/m);
    expect(metrics).toContain("def bleu_like(candidate, references, max_n=4):");
    const info = infos.find((i) => i.task_id === "rouge-notebook")!;
    expect(info.removed).toContainEqual({ path: "metrics.ipynb", reason: "prepare-source", of: "metrics.py" });
    expect(await exists(join(rouge, "workspace", "metrics.ipynb"))).toBe(false);
    expect(info.targets.map((t) => t.symbol)).toEqual(["lcs_length", "rouge_l"]);
  });

  it("records hashes that match the files", async () => {
    for (const info of infos) {
      const onDisk = await readBundle(info.dir);
      expect(onDisk.hashes).toEqual(info.hashes);
      // paper.pdf / paper.md stay out of the workspace hash; bundle.json "paper" records them
      const ws = join(info.dir, "workspace");
      const hashed = (await listFiles(ws)).filter((f) => f !== "paper.pdf" && f !== "paper.md");
      expect(onDisk.hashes.workspace).toBe((await hashTree(ws, hashed)).hash);
      const { paper } = JSON.parse(await readFile(join(EXAMPLE_TASKS, info.task_id, "task.json"), "utf8"));
      expect(onDisk.paper?.source, info.task_id).toBe(paper.text !== undefined ? "task" : undefined);
      expect(onDisk.hashes.reference).toBe((await hashTree(join(info.dir, "reference"))).hash);
      const alternatives = (await readdir(info.dir)).includes("alternatives") ? (await hashTree(join(info.dir, "alternatives"))).hash : undefined;
      expect(onDisk.hashes.grader).toBe(combineGraderHash((await hashTree(join(info.dir, "grader"))).hash, alternatives));
      expect(onDisk.hashes.task).toBe(await taskHash(join(EXAMPLE_TASKS, info.task_id)));
      expect(onDisk.upstream.origin).toBe("path");
      expect(onDisk.targets.every((t) => t.start_line >= 1 && t.end_line > t.start_line)).toBe(true);
    }
  });

  it("grader tests fail on the stub (in tests) and pass with the reference", async () => {
    // pytest here; the node:test examples' stub and reference runs are verify's (examples/tasks/*/verification.json)
    for (const info of infos.filter((i) => !TS_TASK_IDS.includes(i.task_id))) {
      const ws = join(info.dir, "workspace");
      const grader = join(info.dir, "grader");
      const [stub, ref] = await Promise.all([runGrader(ws, grader), runGrader(ws, grader, { overlay: join(info.dir, "reference") })]);
      expect(stub.exitCode, `${info.task_id} stub:\n${stub.output}`).toBe(1);
      expect(stub.failed, info.task_id).toBeGreaterThan(0);
      expect(stub.errors, info.task_id).toBe(0);
      expect(stub.output).toContain("NotImplementedError");
      expect(ref.exitCode, `${info.task_id} reference:\n${ref.output}`).toBe(0);
      expect(ref.passed).toBe(stub.failed + stub.passed);
    }
  });

  it("masks the TypeScript and JavaScript targets to a TODO and a throw", async () => {
    const stub = (name: string) => new RegExp(`\\{\\n {2}// TODO: implement ${name}\\n {2}throw new Error\\("not implemented: ${name}"\\);\\n\\}`);
    const merge = await readFile(join(out, "bpe-merge", "workspace", "src", "merge.ts"), "utf8");
    expect(merge).toMatch(stub("applyMerge"));
    expect(merge).toContain("export function applyMerge(vocab: VocabEntry[], stats: Map<PairKey, number>, left: string, right: string): number {");
    expect(merge).not.toContain("adjust(stats, before, -entry.count)");
    const beam = await readFile(join(out, "beam-search", "workspace", "src", "beam.js"), "utf8");
    expect(beam).toMatch(stub("beamSearch"));
    expect(beam).not.toContain("candidates.sort(compareCandidates)");
  });

  it("prints one line per task without --json", async () => {
    const again = await makeTempDir("bundles-text");
    const r = await runCli(["build", "examples/tasks/pref-loss", "examples/tasks/rouge-notebook", "--out", again]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^built pref-loss → \S+pref-loss \(1 target, (\d+) files\)\nbuilt rouge-notebook → \S+rouge-notebook \(2 targets, \d+ files\)$/);
    const files = (await listTree(join(again, "pref-loss", "workspace"))).filter((e) => !e.endsWith("/"));
    expect(r.stdout).toContain(`(1 target, ${files.length} files)`);
  });
});

describe("lmr build without the paper", () => {
  it("opens the instruction with a note when it names paper.md but the workspace has none, after hashing", async () => {
    const root = await makeTempDir("no-paper");
    const taskDir = await copyTask(root, "pref-loss", (m) => {
      delete m.paper.text;
      m.paper.arxiv = "2305.18290v3";
    });
    // without paper.text the example's paper.json would be a stray paper text, which validate refuses
    await rm(join(taskDir, "paper.json"));
    const out = join(root, "out");
    const r = await runCli(["build", "--tasks-dir", join(root, "tasks"), "--out", out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const ws = join(out, "pref-loss", "workspace");
    expect(await exists(join(ws, "paper.md"))).toBe(false);
    const text = await readFile(join(ws, "instruction.md"), "utf8");
    const original = await readFile(join(root, "tasks", "pref-loss", "instruction.md"), "utf8");
    expect(text.startsWith("> **Note.** This workspace was built without `paper.md`")).toBe(true);
    expect(text).toContain("arXiv 2305.18290v3 (https://arxiv.org/abs/2305.18290v3)");
    expect(text.endsWith(original)).toBe(true);
    // the note comes after hashing, as the paper does: the hash covers the instruction as written
    const b = await readBundle(join(out, "pref-loss"));
    const files = (await hashTree(ws)).files;
    expect(files["instruction.md"]).toBeDefined();
    expect(b.hashes.workspace).not.toBe((await hashTree(ws)).hash);
  });

  it("adds no note where the paper is there (the examples' own paper text)", async () => {
    const root = await makeTempDir("with-paper");
    const out = join(root, "out");
    const r = await runCli(["build", join(EXAMPLE_TASKS, "pref-loss"), "--out", out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const text = await readFile(join(out, "pref-loss", "workspace", "instruction.md"), "utf8");
    expect(text).toBe(await readFile(join(EXAMPLE_TASKS, "pref-loss", "instruction.md"), "utf8"));
    expect(await exists(join(out, "pref-loss", "workspace", "paper.md"))).toBe(true);
  });
});

describe("lmr build: workspace.strip", () => {
  it("strips a symbol's docstrings from the workspace, keeps the masker's TODO, every line and the reference's text", async () => {
    const root = await makeTempDir("strip");
    await copyTask(root, "mcts-best-action", (m) => {
      m.workspace = { ...(m.workspace ?? {}), strip: [{ file: "core/mcts.py", symbol: "OpenLoopMCTS", reason: "test" }] };
    });
    const out = join(root, "out");
    const r = await runCli(["build", "--tasks-dir", join(root, "tasks"), "--out", out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const ws = await readFile(join(out, "mcts-best-action", "workspace", "core", "mcts.py"), "utf8");
    const ref = await readFile(join(out, "mcts-best-action", "reference", "core", "mcts.py"), "utf8");
    expect(ws).not.toContain("One simulation from `state`");
    expect(ws).toContain("# TODO: implement OpenLoopMCTS.find_best_action");
    expect(ws).toContain('"""Open-loop MCTS for dialogue policy planning.');
    expect(ref).toContain("One simulation from `state`");
    const b = await readBundle(join(out, "mcts-best-action"));
    expect(b.stripped).toEqual([{ file: "core/mcts.py", symbol: "OpenLoopMCTS", comments: 0, docstrings: expect.any(Number), why: "test" }]);
    expect(b.stripped![0]!.docstrings).toBeGreaterThanOrEqual(3);
  });

  it("refuses an entry whose file is not there, or that strips nothing, naming the manifest field", async () => {
    const root = await makeTempDir("strip-bad");
    await copyTask(root, "mcts-best-action", (m) => {
      m.workspace = { ...(m.workspace ?? {}), strip: [{ file: "core/nope.py", reason: "test" }] };
    });
    const r = await runCli(["build", "--tasks-dir", join(root, "tasks"), "--out", join(root, "out")]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/task\.json: \/workspace\/strip\/0: 'core\/nope\.py' is not in the prepared upstream tree/);
    const root2 = await makeTempDir("strip-empty");
    await copyTask(root2, "mcts-best-action", (m) => {
      m.workspace = { ...(m.workspace ?? {}), strip: [{ file: "core/mcts.py", symbol: "OpenLoopMCTS.find_best_action", reason: "test" }] };
    });
    const r2 = await runCli(["build", "--tasks-dir", join(root2, "tasks"), "--out", join(root2, "out")]);
    expect(r2.exitCode).toBe(2);
    expect(r2.stderr).toContain("has no comment or docstring to strip");
  });
});

describe("lmr build failures", () => {
  it("rejects an invalid manifest with exit 2 and writes nothing", async () => {
    const root = await makeTempDir("bad-task");
    await copyTask(root, "pref-loss", (m) => {
      m.category = "Vibes";
    });
    const out = join(root, "out");
    const r = await runCli(["build", "--tasks-dir", join(root, "tasks"), "--out", out]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/task\.json: \/category/);
    expect(r.stdout).toBe("");
    expect(await exists(out)).toBe(false);
  });

  it("leaves no partial bundle when a build fails half-way", async () => {
    const root = await makeTempDir("bad-symbol");
    const taskDir = await copyTask(root, "pref-loss", (m) => {
      m.targets[0].symbol = "preference_los";
    });
    // the alternatives' blocks name the real symbol, which validate would report first
    await rm(join(taskDir, "alternatives"), { recursive: true });
    const out = join(root, "out");
    const r = await runCli(["build", taskDir, "--out", out]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("/targets/0");
    expect(r.stderr).toContain("preference_los");
    expect(await readdir(out).catch(() => [])).toEqual([]);
  });

  it("refuses a target file that is a symlink (the masked text would be written through it)", async () => {
    const root = await makeTempDir("symlink-target");
    const taskDir = await copyTask(root, "pref-loss");
    const upstream = join(root, "upstreams", "pref-trainer");
    await rename(join(upstream, "trainers.py"), join(root, "outside.py"));
    await symlink(join(root, "outside.py"), join(upstream, "trainers.py"));
    const before = await readFile(join(root, "outside.py"));
    const r = await runCli(["build", taskDir, "--out", join(root, "out")]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("/targets/0/file");
    expect(r.stderr).toContain("symbolic link");
    expect((await readFile(join(root, "outside.py"))).equals(before)).toBe(true);
    expect(await readdir(join(root, "out")).catch(() => [])).toEqual([]);
  });

  it("builds an upstream holding a symlink that points nowhere (a submodule never checked out)", async () => {
    const root = await makeTempDir("dangling-link");
    const taskDir = await copyTask(root, "pref-loss");
    await symlink("../vendor-never-checked-out/lib", join(root, "upstreams", "pref-trainer", "vendored"));
    const r = await runCli(["build", taskDir, "--out", join(root, "out")]);
    expect(r.exitCode, r.stderr).toBe(0);
    const info = JSON.parse(await readFile(join(root, "out", "pref-loss", "bundle.json"), "utf8")) as BundleManifest;
    expect(info.hashes.workspace).toMatch(/^[0-9a-f]{64}$/);
  });

  it("needs --out and explains itself in --help", async () => {
    const missing = await runCli(["build", "examples/tasks/pref-loss"]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("--out");
    const help = await runCli(["build", "--help"]);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("$ lmr build examples/tasks/pref-loss --out bundles");
  });
});
