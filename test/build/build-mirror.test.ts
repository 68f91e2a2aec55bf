import { readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { BundleInfo } from "../../src/bundle/types.js";
import { findLines, forbiddenEntries, listTree, maskedAwayLines } from "../helpers/bundle-checks.js";
import { UPSTREAMS, addLeftovers, addToMirror, makeGitRepo, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, runGrader, jsonData } from "../helpers/run-cli.js";
import { copyTask } from "../helpers/task-copy.js";

const OWNER = "lmr-fixtures";

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/** An older, re-indented copy of preference_loss inside a class: what a careless upstream keeps around. */
async function legacyCopy(): Promise<string> {
  const source = await readFile(join(UPSTREAMS, "pref-trainer", "trainers.py"), "utf8");
  const start = source.indexOf("def preference_loss(");
  const end = source.indexOf("\n\n\n@dataclass");
  const body = source.slice(start, end).replace("def preference_loss(", "def dpo_loss_v0(self, ");
  const indented = body
    .split("\n")
    .map((l) => (l === "" ? l : `    ${l}`))
    .join("\n");
  return `from utils import check_same_length, log_sigmoid\n\n\nclass Legacy:\n${indented}\n`;
}

afterAll(removeTempDirs);

/** Fixture upstream → real git repository with leftovers → bare clone in a mirror; a task copy pinned to it. */
async function mirroredTask(taskId: string, upstream: string, opts: Parameters<typeof makeGitRepo>[1]) {
  const root = await makeTempDir(`mirror-${taskId}`);
  const repo = await makeGitRepo(join(UPSTREAMS, upstream), opts);
  const mirror = join(root, "mirror");
  await addToMirror(mirror, repo.dir, OWNER, upstream);
  const taskDir = await copyTask(root, taskId, (m) => {
    m.upstream = { repo: `https://github.com/${OWNER}/${upstream}`, commit: repo.commit, license: "MIT" };
  });
  return { root, repo, mirror, taskDir, out: join(root, "out"), env: { LMR_CACHE: join(root, "cache") } };
}

async function build(args: string[], env: Record<string, string>): Promise<{ info: BundleInfo; stderr: string }> {
  const r = await runCli(["build", ...args, "--json"], { env });
  expect(r.exitCode, r.stderr).toBe(0);
  const infos = jsonData(r.stdout) as BundleInfo[];
  expect(infos).toHaveLength(1);
  return { info: infos[0]!, stderr: r.stderr };
}

describe("lmr build with a git upstream served by --mirror", () => {
  it("pins the commit, removes bytecode and copies of the target, and flags a re-indented copy", async () => {
    const trainers = await readFile(join(UPSTREAMS, "pref-trainer", "trainers.py"), "utf8");
    const t = await mirroredTask("pref-loss", "pref-trainer", {
      extraFiles: { "trainers_backup.py": trainers, "old/trainers_v0.py": await legacyCopy() },
      before: (dir) => addLeftovers(dir, "trainers.py"),
    });
    // the leftovers really are in the commit
    expect(await readdir(join(t.repo.dir, "__pycache__"))).toEqual([expect.stringMatching(/^trainers\.cpython-\d+\.pyc$/)]);

    const { info, stderr } = await build([t.taskDir, "--out", t.out, "--mirror", t.mirror], t.env);
    expect(info.upstream).toEqual({ location: `https://github.com/${OWNER}/pref-trainer`, origin: "mirror", commit: t.repo.commit });
    expect(info.removed).toEqual([
      { path: "__pycache__/", reason: "bytecode" },
      { path: "trainers_backup.py", reason: "copy-of-target", of: "trainers.py" },
    ]);
    const ws = join(info.dir, "workspace");
    const entries = await listTree(ws);
    expect(forbiddenEntries(entries)).toEqual([]);
    expect(entries).not.toContain("trainers_backup.py");
    expect(entries).toContain("old/trainers_v0.py");

    // the re-indented copy is reported (file, target, lines), the masked target is clean
    expect(info.leaks.length).toBe(1);
    const leak = info.leaks[0]!;
    expect(leak).toMatchObject({ file: "old/trainers_v0.py", kind: "copy", target: "trainers.py::preference_loss" });
    const run = /^lines \d+-\d+ repeat (\d+) of the \d+ distinctive lines/.exec(leak.detail);
    expect(Number(run?.[1])).toBeGreaterThanOrEqual(10);
    expect(leak.allowed).toBeUndefined();
    expect(stderr).toContain("warning:");
    expect(stderr).toContain("old/trainers_v0.py");
    const gone = await maskedAwayLines(join(info.dir, "reference", "trainers.py"), join(ws, "trainers.py"));
    const hits = await findLines(ws, gone);
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.startsWith("old/trainers_v0.py: "))).toBe(true);
    const onDisk = JSON.parse(await readFile(join(info.dir, "bundle.json"), "utf8"));
    expect(onDisk.leaks).toEqual(info.leaks);

    const stub = await runGrader(ws, join(info.dir, "grader"));
    expect(stub.exitCode, stub.output).toBe(1);
    expect(stub.errors).toBe(0);
    const ref = await runGrader(ws, join(info.dir, "grader"), { overlay: join(info.dir, "reference") });
    expect(ref.exitCode, ref.output).toBe(0);
  });

  it("marks a copy that verification.allowed_leaks permits", async () => {
    const t = await mirroredTask("pref-loss", "pref-trainer", { extraFiles: { "old/trainers_v0.py": await legacyCopy() } });
    const manifestPath = join(t.taskDir, "task.json");
    const manifest = JSON.parse(await readFile(manifestPath, "utf8"));
    manifest.verification = { ...manifest.verification, allowed_leaks: [{ file: "old/trainers_v0.py", reason: "kept for the ablation in the appendix" }] };
    await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
    const { info, stderr } = await build([t.taskDir, "--out", t.out, "--mirror", t.mirror], t.env);
    expect(info.leaks.map((l) => [l.file, l.allowed])).toEqual([["old/trainers_v0.py", true]]);
    expect(stderr).toContain("allowed by verification.allowed_leaks");
  });

  it("removes notebook checkpoints, bytecode and the notebook a target module came from", async () => {
    const t = await mirroredTask("rouge-notebook", "metrics-notebook", {
      before: (dir) => addLeftovers(dir, "data.py", "metrics.ipynb"),
    });
    expect(await exists(join(t.repo.dir, ".ipynb_checkpoints", "metrics-checkpoint.ipynb"))).toBe(true);
    const { info } = await build([t.taskDir, "--out", t.out, "--mirror", t.mirror], t.env);
    expect(info.upstream.commit).toBe(t.repo.commit);
    expect(info.removed).toEqual([
      { path: ".ipynb_checkpoints/", reason: "notebook-checkpoint" },
      { path: "__pycache__/", reason: "bytecode" },
      { path: "metrics.ipynb", reason: "prepare-source", of: "metrics.py" },
    ]);
    const ws = join(info.dir, "workspace");
    expect(forbiddenEntries(await listTree(ws))).toEqual([]);
    expect(info.leaks).toEqual([]);
    const gone = await maskedAwayLines(join(info.dir, "reference", "metrics.py"), join(ws, "metrics.py"));
    expect(await findLines(ws, gone)).toEqual([]);
    const stub = await runGrader(ws, join(info.dir, "grader"));
    expect(stub.exitCode, stub.output).toBe(1);
    const ref = await runGrader(ws, join(info.dir, "grader"), { overlay: join(info.dir, "reference") });
    expect(ref.exitCode, ref.output).toBe(0);
  });

  it("exits 3 when the mirror does not hold the repository, 2 when the commit is unknown", async () => {
    const t = await mirroredTask("pref-loss", "pref-trainer", {});
    const empty = await makeTempDir("empty-mirror");
    const infra = await runCli(["build", t.taskDir, "--out", t.out, "--mirror", empty], { env: t.env });
    expect(infra.exitCode, infra.stderr).toBe(3);
    expect(infra.stderr).toContain("no mirror of");

    const manifestPath = join(t.taskDir, "task.json");
    const manifest = JSON.parse(await readFile(manifestPath, "utf8"));
    manifest.upstream.commit = "0".repeat(40);
    await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
    const unknown = await runCli(["build", t.taskDir, "--out", t.out, "--mirror", t.mirror], { env: t.env });
    expect(unknown.exitCode, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain("not found");
    expect(await readdir(t.out).catch(() => [])).toEqual([]);
  });
});
