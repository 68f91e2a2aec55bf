import { cp, mkdtemp, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonData, jsonEnvelope } from "../helpers/run-cli.js";

const REPO = resolve(import.meta.dirname, "../..");
const CLI = join(REPO, "dist/cli/main.js");
const FIXTURES = "test/fixtures/manifests";

/** Every file and folder under `root` with its size and mtime: what "nothing was written" compares. */
async function snapshotTree(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const info = await stat(path).catch(() => undefined);
      out.push(`${path.slice(root.length)} ${info?.size ?? "-"} ${info?.mtimeMs ?? "-"}`);
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk(root);
  return out.sort();
}

async function lmr(args: string[], cwd = REPO, watch = join(REPO, FIXTURES)) {
  const before = await snapshotTree(watch);
  const result = await execa("node", [CLI, ...args], { cwd, reject: false, env: { NO_COLOR: "1" } });
  expect(await snapshotTree(watch)).toEqual(before);
  return { code: result.exitCode, stdout: result.stdout, stderr: result.stderr, lines: result.stdout.split("\n").filter(Boolean) };
}

/** The `file: pointer: ` prefix of each problem line (everything before the message). */
function prefixes(lines: string[]): string[] {
  return lines.slice(0, -1).map((l) => /^(\S+task\.json: \/\S*: )/.exec(l)?.[1] ?? `<no prefix> ${l}`);
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first with \`npx tsc -p .\``);
});

// Each case is its own CLI process and nothing writes, so they can run side by side.
describe.concurrent("lmr validate on fixtures", () => {
  it.each(["valid-minimal", "valid-local"])("%s is valid: exit 0", async (name) => {
    const r = await lmr(["validate", `${FIXTURES}/${name}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines).toEqual(["1 task, 0 problems"]);
  });

  it.each([
    ["wrong-types", ["/environment/gpu: ", "/paper/year: ", "/targets: ", "/tests/timeout_total_s: "]],
    ["unknown-category", ["/category: "]],
    ["dotdot-path", ["/targets/0/file: "]],
    ["absolute-path", ["/tests/files/0: "]],
    ["short-sha", ["/upstream/commit: "]],
    ["missing-files", ["/instruction: ", "/tests/files/0: "]],
    ["region-without-range", ["/targets/0/region: "]],
  ])("%s: exit 1 with exactly the intended problems", async (name, pointers) => {
    const r = await lmr(["validate", `${FIXTURES}/${name}`]);
    expect(r.code, r.stderr).toBe(1);
    expect(prefixes(r.lines)).toEqual(pointers.map((p) => `${FIXTURES}/${name}/task.json: ${p}`));
    expect(r.lines.at(-1)).toBe(`1 task, ${pointers.length} problem${pointers.length === 1 ? "" : "s"}`);
  });

  it("gives the friendly message for a short SHA", async () => {
    const r = await lmr(["validate", `${FIXTURES}/short-sha`]);
    expect(r.lines[0]).toBe(
      `${FIXTURES}/short-sha/task.json: /upstream/commit: commit must be a full 40-hex SHA, got 'abc123' (hint: git rev-parse abc123 in the upstream clone)`,
    );
  });

  it("reports a duplicate id on both tasks, each naming the other", async () => {
    const a = `${FIXTURES}/duplicate-ids/first/same-task`;
    const b = `${FIXTURES}/duplicate-ids/second/same-task`;
    const r = await lmr(["validate", a, b]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.lines).toEqual([
      `${a}/task.json: /id: id 'same-task' is also used by ${b}/task.json (hint: give every task its own id (and folder name))`,
      `${b}/task.json: /id: id 'same-task' is also used by ${a}/task.json (hint: give every task its own id (and folder name))`,
      "2 tasks, 2 problems",
    ]);
  });

  it("stops on malformed JSON with exit 2 and its line:column", async () => {
    const r = await lmr(["validate", `${FIXTURES}/bad-json`]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(new RegExp(`^lmr: ${FIXTURES}/bad-json/task.json: invalid JSON at line 5, column 3 \\(5:3\\): expected ',' or '}'`));
    const j = await lmr(["validate", `${FIXTURES}/bad-json`, "--json"]);
    expect(j.code, j.stderr).toBe(2);
    expect(jsonEnvelope(j.stdout)).toMatchObject({ ok: false, command: "validate", error: { code: "manifest/bad-json", kind: "input" } });
    const out = jsonData(j.stdout);
    expect(out).toMatchObject({ tasks: 1, problems: [{ file: `${FIXTURES}/bad-json/task.json`, pointer: "" }] });
    expect(out.problems[0].message).toContain("5:3");
  });

  it("flags a symlink that escapes the task folder (made in a temp copy)", async () => {
    const tmp = await mkdtemp(join(tmpdir(), "lmr-validate-"));
    try {
      await cp(join(REPO, FIXTURES, "escaping-symlink"), join(tmp, "escaping-symlink"), { recursive: true });
      await writeFile(join(tmp, "outside.json"), '{"secret": true}\n');
      await symlink(join(tmp, "outside.json"), join(tmp, "escaping-symlink", "data", "leak.json"));
      const r = await lmr(["validate", "escaping-symlink"], tmp, tmp);
      expect(r.code, r.stderr).toBe(1);
      expect(r.lines[0]).toMatch(/^escaping-symlink\/task\.json: \/tests\/fixtures\/0: 'data\/leak\.json' resolves outside the task folder/);
      expect(r.lines).toHaveLength(2);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});

describe.concurrent("lmr validate options and output", () => {
  let empty: string;
  beforeAll(async () => {
    empty = await mkdtemp(join(tmpdir(), "lmr-validate-empty-"));
  });
  afterAll(async () => {
    await rm(empty, { recursive: true, force: true });
  });

  it("prints {tasks, problems, giveaway} in the --json envelope, also on exit 1", async () => {
    const r = await lmr(["validate", `${FIXTURES}/missing-files`, `${FIXTURES}/valid-minimal`, "--json"]);
    expect(r.code, r.stderr).toBe(1);
    expect(jsonEnvelope(r.stdout)).toMatchObject({
      ok: false,
      command: "validate",
      error: { code: "validate/problems", kind: "check", message: "2 problems in 2 tasks" },
    });
    const out = jsonData(r.stdout);
    expect(Object.keys(out)).toEqual(["tasks", "problems", "giveaway"]);
    expect(out.tasks).toBe(2);
    expect(out.problems).toHaveLength(2);
    for (const p of out.problems) {
      expect(Object.keys(p)).toEqual(["file", "pointer", "message", "hint"]);
      expect(p.file).toBe(`${FIXTURES}/missing-files/task.json`);
      expect(typeof p.hint).toBe("string");
    }
    const ok = jsonEnvelope((await lmr(["validate", `${FIXTURES}/valid-minimal`, "--json"])).stdout);
    expect(ok).toEqual({ ok: true, command: "validate", data: { tasks: 1, problems: [], giveaway: [] } });
  });

  it("validates every task under --tasks-dir, and accepts a task.json path", async () => {
    const r = await lmr(["validate", "--tasks-dir", `${FIXTURES}/duplicate-ids/first`]);
    expect([r.code, r.lines]).toEqual([0, ["1 task, 0 problems"]]);
    const f = await lmr(["validate", `${FIXTURES}/valid-minimal/task.json`]);
    expect([f.code, f.lines]).toEqual([0, ["1 task, 0 problems"]]);
  });

  it("exits 2 when any task under --tasks-dir is unreadable", async () => {
    const r = await lmr(["validate", "--tasks-dir", FIXTURES]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("bad-json/task.json: invalid JSON at line 5, column 3");
  });

  it("exits 2 with a hint when tasks/ does not exist", async () => {
    const r = await lmr(["validate"], empty, empty);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe("lmr: tasks: tasks folder does not exist (hint: run from the project root, pass --tasks-dir DIR, or name task folders as arguments)");
    const j = await lmr(["validate", "--json"], empty, empty);
    expect(jsonEnvelope(j.stdout)).toMatchObject({ ok: false, error: { code: "task/tasks-dir-missing" } });
    expect(jsonData(j.stdout)).toEqual({
      tasks: 0,
      problems: [{ file: "tasks", pointer: "", message: "tasks folder does not exist", hint: expect.stringContaining("--tasks-dir") }],
    });
  });

  it("exits 2 for a task folder that does not exist or has no task.json", async () => {
    const missing = await lmr(["validate", `${FIXTURES}/no-such-task`]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain(`${FIXTURES}/no-such-task: task folder does not exist`);
    const noManifest = await lmr(["validate", `${FIXTURES}/_upstreams`]);
    expect(noManifest.code, noManifest.stderr).toBe(2);
    expect(noManifest.stderr).toContain(`${FIXTURES}/_upstreams/task.json: no task.json in this task folder`);
  });

  it("has help with an example", async () => {
    const r = await lmr(["validate", "--help"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Usage: lmr validate [options] [TASK_DIR...]");
    expect(r.stdout).toContain("$ lmr validate tasks/");
  });
});

describe("lmr validate and the giveaway score verify recorded", () => {
  it("prints each task's score and the medians, refuses a paper level above the threshold, and accepts it with giveaway.allow", async () => {
    const root = await mkdtemp(join(tmpdir(), "lmr-validate-giveaway-"));
    try {
      const { copyTask } = await import("../helpers/task-copy.js");
      const dir = await copyTask(root, "pref-loss");
      const { readFile } = await import("node:fs/promises");
      const recFile = join(dir, "verification.json");
      const rec = JSON.parse(await readFile(recFile, "utf8"));
      expect(rec.giveaway.paper.score).toBeLessThanOrEqual(rec.giveaway.threshold);
      const shown = await execa("node", [CLI, "validate", dir], { reject: false, env: { NO_COLOR: "1" } });
      expect(shown.exitCode, shown.stdout).toBe(0);
      expect(shown.stdout).toMatch(
        new RegExp(`giveaway  pref-loss  paper ${rec.giveaway.paper.score.toFixed(2)}  hinted ${rec.giveaway.hinted.score.toFixed(2)}`),
      );
      // a record saying the paper level gives the method away
      rec.giveaway.paper = { ...rec.giveaway.paper, score: 0.62, revealed: ["call:logsigmoid", "op:beta * logits"] };
      await writeFile(recFile, JSON.stringify(rec, null, 2));
      const refused = await execa("node", [CLI, "validate", dir, "--json"], { reject: false });
      expect(refused.exitCode).toBe(1);
      const out = jsonData(refused.stdout);
      expect(out.problems).toEqual([
        expect.objectContaining({
          pointer: "/instruction",
          message: expect.stringMatching(/reveals 0\.62 of the reference body.*call:logsigmoid, op:beta \* logits/),
        }),
      ]);
      expect(out.problems[0].hint).toMatch(/hints\.md.*giveaway\.allow/);
      expect(out.giveaway).toEqual([{ task: "pref-loss", paper: 0.62, hinted: rec.giveaway.hinted.score, allowed: false }]);
      // a curation check: the commands that only use the task (build, eval, …) still take it
      const built = await execa("node", [CLI, "build", dir, "--out", join(root, "bundles")], { reject: false });
      expect(built.exitCode, built.stderr).toBe(0);
      const manifest = JSON.parse(await readFile(join(dir, "task.json"), "utf8"));
      manifest.giveaway = { allow: "the revealed call is the loss function the contract names" };
      await writeFile(join(dir, "task.json"), JSON.stringify(manifest, null, 2));
      const allowed = await execa("node", [CLI, "validate", dir], { reject: false, env: { NO_COLOR: "1" } });
      expect(allowed.exitCode, allowed.stdout).toBe(0);
      expect(allowed.stdout).toContain("paper 0.62 (allowed)");
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
