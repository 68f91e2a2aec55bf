import { appendFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changedTasksSince } from "../../src/source/changed-tasks.js";
import type { VerificationRecord } from "../../src/verify/record.js";
import { git, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData, jsonEnvelope } from "../helpers/run-cli.js";
import { copyTask } from "../helpers/task-copy.js";
import { compileVerifySchemas, schemaErrors } from "./schemas.js";

afterAll(removeTempDirs);

const schemas = compileVerifySchemas();

type Output = {
  ok: boolean;
  tasks: (VerificationRecord & { unchanged: boolean })[];
  changed_since?: { ref: string; commit: string; changed: { task: string; reason: string }[]; unchanged: string[] };
  error?: { code: string; message: string };
};

/**
 * A dataset repository with three commits: (1) pref-loss and bpe-merge over their own
 * local upstreams, (2) beam-search added, (3) pref-loss's instruction changed.
 * Since commit 1, beam-search was added and pref-loss changed; bpe-merge is untouched.
 */
let root: string;
let tasks: string;
let first: string;

beforeAll(async () => {
  root = await makeTempDir("changed-since");
  tasks = join(root, "tasks");
  await copyTask(root, "pref-loss");
  await copyTask(root, "bpe-merge");
  await git(root, "init", "-q");
  await git(root, "add", "-A");
  await git(root, "commit", "-q", "-m", "two tasks");
  first = await git(root, "rev-parse", "HEAD");
  await copyTask(root, "beam-search");
  await git(root, "add", "-A");
  await git(root, "commit", "-q", "-m", "beam-search added");
  await appendFile(join(tasks, "pref-loss", "instruction.md"), "\nThe loss is a mean over the batch.\n");
  await git(root, "add", "-A");
  await git(root, "commit", "-q", "-m", "pref-loss instruction changed");
}, 60_000);

function parse(stdout: string): Output {
  try {
    // the envelope's ok and error beside the command's data
    const e = jsonEnvelope<Output>(stdout);
    return { ...e.data!, ok: e.ok, ...(e.error ? { error: e.error } : {}) };
  } catch {
    throw new Error(`stdout is not JSON:\n${stdout}`);
  }
}

describe("--changed-since REF", () => {
  it("lmr verify --changed-since verifies exactly the added and the changed task, for real", async () => {
    const r = await runCli([
      "verify",
      "--tasks-dir",
      tasks,
      "--changed-since",
      first,
      "--runs",
      "1",
      "--mutants",
      "4",
      "--min-kill-ratio",
      "0.5",
      "--no-write",
      "-j",
      "2",
      "--json",
    ]);
    const out = parse(r.stdout);
    expect(schemaErrors(schemas.output, jsonData(r.stdout)), r.stderr).toEqual([]);
    expect(r.exitCode, JSON.stringify(out.tasks.map((t) => t.failure))).toBe(0);
    expect(out.tasks.map((t) => t.task_id)).toEqual(["beam-search", "pref-loss"]);
    // really run, not an earlier record reused
    for (const t of out.tasks) {
      expect(t.unchanged).toBe(false);
      expect(t.steps.reference.runs).toHaveLength(1);
      expect(t.steps.reference.runs[0]!.status).toBe("passed");
    }
    expect(out.changed_since).toMatchObject({ ref: first, commit: first });
    expect(out.changed_since!.changed.map((c) => c.reason)).toEqual([
      expect.stringMatching(/^tasks\/beam-search\/.+ changed$/),
      "tasks/pref-loss/instruction.md changed",
    ]);
    expect(out.changed_since!.unchanged.map((d) => d.split("/").pop())).toEqual(["bpe-merge"]);
  }, 120_000);

  it("lmr validate --changed-since validates the same two and says why each counts", async () => {
    const r = await runCli(["validate", "--tasks-dir", tasks, "--changed-since", `${first}`]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`changed since ${first} (${first.slice(0, 12)}): 2 of 3 tasks`);
    expect(r.stdout).toMatch(/beam-search: tasks\/beam-search\/\S+ changed/);
    expect(r.stdout).toContain("pref-loss: tasks/pref-loss/instruction.md changed");
    expect(r.stdout).not.toContain("bpe-merge");
    expect(r.stdout).toContain("2 tasks, 0 problems");
    const json = await runCli(["validate", "--tasks-dir", tasks, "--changed-since", "HEAD", "--json"]);
    expect(json.exitCode).toBe(0);
    expect(parse(json.stdout)).toMatchObject({ ok: true, tasks: 0 });
  });

  it("nothing changed: verify says so and exits 0 without verifying", async () => {
    const r = await runCli(["verify", "--tasks-dir", tasks, "--changed-since", "HEAD"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^changed since HEAD \([0-9a-f]{12}\): 0 of 3 tasks, nothing to verify$/);
    // the workflow builds only the changed tasks' images: none here, so Docker is never asked
    const env = await runCli(["env", "build", "--tasks-dir", tasks, "--changed-since", "HEAD"], { env: { LMR_DOCKER: "/nonexistent/docker" } });
    expect(env.exitCode, env.stderr).toBe(0);
    expect(env.stdout).toBe("no task changed since HEAD: nothing to build");
    const bad = await runCli(["env", "build", "--tasks-dir", tasks, "--changed-since", "no-such-ref"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("'no-such-ref' is not a commit");
  });

  it("a revision that is not a commit is a usage error (exit 2) naming it, for verify and validate", async () => {
    const v = await runCli(["verify", "--tasks-dir", tasks, "--changed-since", "no-such-branch", "--json"]);
    expect(v.exitCode).toBe(2);
    expect(parse(v.stdout).error).toMatchObject({ code: "changed-since/bad-ref" });
    expect(parse(v.stdout).error!.message).toContain("'no-such-branch' is not a commit");
    const w = await runCli(["validate", "--tasks-dir", tasks, "--changed-since", "HEAD~9"]);
    expect(w.exitCode).toBe(2);
    expect(w.stderr).toContain("'HEAD~9' is not a commit");
    expect(w.stderr).toContain("fetch-depth: 0");
  });

  it("a folder outside any git work tree is a usage error", async () => {
    const loose = await makeTempDir("no-git");
    await copyTask(loose, "bpe-merge");
    const r = await runCli(["validate", "--tasks-dir", join(loose, "tasks"), "--changed-since", "HEAD"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("not in a git work tree");
  });

  it("rule: uncommitted and untracked files count, a local upstream is an input, and siblings over one upstream follow with the dataset scan", async () => {
    const dirs = ["beam-search", "bpe-merge", "pref-loss"].map((id) => join(tasks, id));
    expect((await changedTasksSince(dirs, "HEAD")).changed).toEqual([]);
    // an untracked file in bpe-merge's upstream folder: bpe-merge changed, through rule 2
    await writeFile(join(root, "upstreams", "bpe-tokenizer", "extra.py"), "X = 1\n");
    let c = await changedTasksSince(dirs, "HEAD");
    expect(c.changed).toEqual([{ dir: dirs[1], reason: "upstream upstreams/bpe-tokenizer/extra.py changed" }]);
    await git(root, "add", "-A");
    await git(root, "commit", "-q", "-m", "upstream file");
    // a second task over pref-loss's upstream; then an unstaged change to pref-loss's tests
    await copyTask(root, "trainer-class");
    await git(root, "add", "-A");
    await git(root, "commit", "-q", "-m", "trainer-class");
    await appendFile(join(tasks, "pref-loss", "tests", "test_preference_loss.py"), "\n# touched\n");
    const withSibling = [...dirs, join(tasks, "trainer-class")];
    c = await changedTasksSince(withSibling, "HEAD");
    expect(c.changed.map((x) => x.dir)).toEqual([dirs[2]]);
    c = await changedTasksSince(withSibling, "HEAD", { siblings: true });
    expect(c.changed).toEqual([
      { dir: dirs[2], reason: "tasks/pref-loss/tests/test_preference_loss.py changed" },
      { dir: withSibling[3], reason: "shares its upstream with the changed task pref-loss (the leak scan reads that task's reference)" },
    ]);
    // a removed task is no input of the others; a renamed file is a removal and an addition
    await git(root, "checkout", "-q", "--", ".");
    await git(root, "mv", join(tasks, "bpe-merge", "instruction.md"), join(tasks, "bpe-merge", "instruction-old.md"));
    c = await changedTasksSince(withSibling, "HEAD");
    expect(c.changed.map((x) => x.reason)).toEqual(["tasks/bpe-merge/instruction-old.md changed"]);
  });
});
