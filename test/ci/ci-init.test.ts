import { execa } from "execa";
import { access, mkdir, readFile, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { git, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";

afterAll(removeTempDirs);

const WORKFLOW = join(".github", "workflows", "lmr-dataset.yml");

/** The real actionlint: $ACTIONLINT, on PATH, or where `go install` puts it. */
async function findActionlint(): Promise<string | undefined> {
  const candidates = [process.env.ACTIONLINT, "actionlint", join(process.env.GOPATH ?? join(homedir(), "go"), "bin", "actionlint")].filter(
    (c): c is string => !!c,
  );
  for (const c of candidates) {
    const r = await execa(c, ["-version"], { reject: false });
    if (r.exitCode === 0) return c;
  }
  return undefined;
}
const actionlint = await findActionlint();
if (!actionlint)
  console.warn(
    "ci-init.test.ts: actionlint is not installed, so the workflow is not linted here (go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12)",
  );

async function lint(file: string): Promise<{ exitCode: number; output: string }> {
  const r = await execa(actionlint!, ["-no-color", file], { reject: false, all: true });
  return { exitCode: r.exitCode ?? -1, output: String(r.all) };
}

/** The `run:` script of the step named `name` (a literal block), unindented. */
function stepScript(workflow: string, name: string): string {
  const lines = workflow.split("\n");
  const at = lines.findIndex((l) => l.trim() === `- name: ${name}`);
  expect(at, `no step named '${name}'`).toBeGreaterThan(-1);
  const run = lines.findIndex((l, i) => i > at && l.trim() === "run: |");
  const indent = lines[run]!.indexOf("run:") + 2;
  const body: string[] = [];
  for (const l of lines.slice(run + 1)) {
    if (l.trim() !== "" && l.length - l.trimStart().length < indent) break;
    body.push(l.slice(indent));
  }
  return body.join("\n");
}

describe("lmr ci init", () => {
  it("writes the dataset workflow, refuses to overwrite it without --force, replaces it with --force", async () => {
    const repo = await makeTempDir("ci-init");
    const r = await runCli(["ci", "init"], { cwd: repo });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wrote ${WORKFLOW}: jobs validate and verify-changed on pull requests`);
    const text = await readFile(join(repo, WORKFLOW), "utf8");
    expect(text).not.toMatch(/__LMR_/);
    expect(text).toContain('TASKS_DIR: "tasks"');
    expect(text).toMatch(/LMR_INSTALL: "lmr@\d+\.\d+\.\d+"/);
    expect(text).toContain('- cron: "17 3 * * 1"');
    expect(text).toContain('lmr verify --tasks-dir "$TASKS_DIR" --changed-since "$BASE_SHA" --force');
    expect(text).toContain('lmr paper fetch --tasks-dir "$TASKS_DIR" --update-manifest');
    expect(text).toContain("uses: actions/cache@v4");
    for (const job of ["validate", "verify-changed", "pin-papers", "full-verify"]) expect(text).toContain(`\n  ${job}:\n`);

    // a maintainer's edits survive a second init
    await writeFile(join(repo, WORKFLOW), `${text}# ours\n`);
    const again = await runCli(["ci", "init"], { cwd: repo });
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain("the workflow file exists already; it was left as it is (hint: pass --force");
    expect(await readFile(join(repo, WORKFLOW), "utf8")).toBe(`${text}# ours\n`);
    const forced = await runCli(["ci", "init", "--force", "--json"], { cwd: repo });
    expect(forced.exitCode).toBe(0);
    expect(jsonData(forced.stdout)).toEqual({ path: WORKFLOW, replaced: true });
    expect(await readFile(join(repo, WORKFLOW), "utf8")).toBe(text);
  });

  it("takes the tasks folder, schedule, install spec and output path, and refuses values that would break the file", async () => {
    const repo = await makeTempDir("ci-init-opts");
    const out = join(repo, "ci", "dataset.yml");
    const r = await runCli(["ci", "init", "--out", out, "--tasks-dir", "data/tasks/", "--cron", "0 4 * * 0", "--install", "lmr@0.2.0"], { cwd: repo });
    expect(r.exitCode, r.stderr).toBe(0);
    const text = await readFile(out, "utf8");
    expect(text).toContain('TASKS_DIR: "data/tasks"');
    expect(text).toContain('- cron: "0 4 * * 0"');
    expect(text).toContain('LMR_INSTALL: "lmr@0.2.0"');
    for (const [flag, value, says] of [
      ["--cron", "every day", "--cron must be five cron fields"],
      ["--tasks-dir", "../tasks", "--tasks-dir path contains '..'"],
      ["--install", 'lmr"; rm -rf /', "--install must be non-empty and hold no quotes"],
    ] as const) {
      const bad = await runCli(["ci", "init", "--out", join(repo, "bad.yml"), flag, value], { cwd: repo });
      expect(bad.exitCode, `${flag} ${value}`).toBe(2);
      expect(bad.stderr).toContain(says);
      await expect(access(join(repo, "bad.yml"))).rejects.toThrow();
    }
  });

  it.skipIf(!actionlint)("the workflow passes actionlint (with shellcheck where installed), and actionlint catches a broken one", async () => {
    const repo = await makeTempDir("ci-lint");
    expect((await runCli(["ci", "init"], { cwd: repo })).exitCode).toBe(0);
    const file = join(repo, WORKFLOW);
    const ok = await lint(file);
    expect(ok.output).toBe("");
    expect(ok.exitCode).toBe(0);
    const other = join(repo, "other.yml");
    expect((await runCli(["ci", "init", "--out", other, "--tasks-dir", "data/tasks", "--cron", "30 2 1 * *"], { cwd: repo })).exitCode).toBe(0);
    expect(await lint(other)).toEqual({ exitCode: 0, output: "" });
    // the check is real: a job without runs-on, and an unknown expression context, are caught
    const text = await readFile(file, "utf8");
    await writeFile(
      file,
      text
        .replace(
          "  validate:\n    if: github.event_name == 'pull_request'\n    runs-on: ubuntu-24.04\n",
          "  validate:\n    if: github.event_name == 'pull_request'\n",
        )
        .replace("${{ github.event.pull_request.base.sha }}", "${{ pull.base.sha }}"),
    );
    const broken = await lint(file);
    expect(broken.exitCode).toBe(1);
    expect(broken.output).toContain('"runs-on" section is missing in job "validate"');
    expect(broken.output).toContain('undefined variable "pull"');
  });

  it("the record check refuses a committed record this toolkit did not produce, and passes an honest one", async () => {
    const repo = await makeTempDir("ci-records");
    expect((await runCli(["ci", "init"], { cwd: repo })).exitCode).toBe(0);
    const script = stepScript(await readFile(join(repo, WORKFLOW), "utf8"), "Refuse a committed record this toolkit did not produce for these inputs");
    const record = (ok: boolean, task: string, toolkit = "0.1.0") =>
      JSON.stringify(
        { ok, toolkit_version: toolkit, inputs: { task, upstream: { location: "u", commit: null } }, timings: { total_s: Math.random() } },
        null,
        2,
      );
    for (const id of ["honest", "stale", "failed", "other-toolkit"]) await mkdir(join(repo, "tasks", id), { recursive: true });
    await writeFile(join(repo, "tasks", "honest", "verification.json"), record(true, "sha256:a"));
    await writeFile(join(repo, "tasks", "stale", "verification.json"), record(true, "sha256:old"));
    await writeFile(join(repo, "tasks", "failed", "verification.json"), record(false, "sha256:c"));
    await writeFile(join(repo, "tasks", "other-toolkit", "verification.json"), record(true, "sha256:d", "0.0.9"));
    await git(repo, "init", "-q");
    await git(repo, "add", "tasks");
    await git(repo, "commit", "-q", "-m", "records");
    const check = () => execa("bash", ["-e", "-o", "pipefail", "-c", script], { cwd: repo, env: { TASKS_DIR: "tasks" }, reject: false, all: true });
    // what verify --force wrote now: same inputs for honest (timings differ), new ones for the rest, and a task with no committed record
    await writeFile(join(repo, "tasks", "honest", "verification.json"), record(true, "sha256:a"));
    expect((await check()).exitCode).toBe(0);
    await writeFile(join(repo, "tasks", "stale", "verification.json"), record(true, "sha256:new"));
    await writeFile(join(repo, "tasks", "failed", "verification.json"), record(true, "sha256:c"));
    await writeFile(join(repo, "tasks", "other-toolkit", "verification.json"), record(true, "sha256:d"));
    await mkdir(join(repo, "tasks", "new"));
    await writeFile(join(repo, "tasks", "new", "verification.json"), record(true, "sha256:e"));
    const r = await check();
    expect(r.exitCode).toBe(1);
    const errors = String(r.all)
      .split("\n")
      .filter((l) => l.startsWith("::error"))
      .sort();
    expect(errors).toEqual([
      "::error file=tasks/failed/verification.json::the committed record's .ok is false, this toolkit's run gives true: run lmr verify on the task and commit its record",
      "::error file=tasks/new/verification.json::no verification.json is committed: run lmr verify on the task and commit its record",
      '::error file=tasks/other-toolkit/verification.json::the committed record\'s .toolkit_version is "0.0.9", this toolkit\'s run gives "0.1.0": run lmr verify on the task and commit its record',
      '::error file=tasks/stale/verification.json::the committed record\'s .inputs.task is "sha256:old", this toolkit\'s run gives "sha256:new": run lmr verify on the task and commit its record',
    ]);
  });
});
