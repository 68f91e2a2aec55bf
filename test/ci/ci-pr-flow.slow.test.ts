import { execa } from "execa";
import { appendFile, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { git, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { CLI, runCli } from "../helpers/run-cli.js";
import { copyTask } from "../helpers/task-copy.js";

afterAll(removeTempDirs);

/** The `run:` commands of the verify-changed job's steps named here, in the workflow `lmr ci init` wrote. */
function steps(workflow: string, names: string[]): string[] {
  const lines = workflow.split("\n");
  return names.map((name) => {
    const at = lines.findIndex((l) => l.trim() === `- name: ${name}`);
    expect(at, `no step named '${name}'`).toBeGreaterThan(-1);
    const runAt = lines.findIndex((l, i) => i > at && l.trim().startsWith("run:"));
    const first = lines[runAt]!.trim().slice("run:".length).trim();
    if (first !== "|") return first;
    const indent = lines[runAt]!.indexOf("run:") + 2;
    const body: string[] = [];
    for (const l of lines.slice(runAt + 1)) {
      if (l.trim() !== "" && l.length - l.trimStart().length < indent) break;
      body.push(l.slice(indent));
    }
    return body.join("\n");
  });
}

describe("the pull-request check of `lmr ci init`'s workflow, run here on a dataset repository of our own", () => {
  it("passes a change with its record re-made, refuses one whose committed record is stale", async () => {
    const repo = await makeTempDir("ci-pr");
    await copyTask(repo, "pref-loss");
    await copyTask(repo, "beam-search");
    // lmr on PATH as the workflow installs it
    const bin = await makeTempDir("ci-bin");
    await execa("bash", ["-c", `printf '#!/bin/sh\\nexec node ${CLI} "$@"\\n' > ${bin}/lmr && chmod +x ${bin}/lmr`]);
    const env = { TASKS_DIR: "tasks", NO_COLOR: "1", PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ""}` };
    // the maintainer's setup: records made here, committed, the workflow added
    expect((await runCli(["verify", "--tasks-dir", join(repo, "tasks"), "--force"])).exitCode).toBe(0);
    expect((await runCli(["ci", "init"], { cwd: repo })).exitCode).toBe(0);
    await git(repo, "init", "-q");
    await git(repo, "add", "-A");
    await git(repo, "commit", "-q", "-m", "dataset");
    const base = await git(repo, "rev-parse", "HEAD");
    const [validate, verify, records] = steps(await readFile(join(repo, ".github/workflows/lmr-dataset.yml"), "utf8"), [
      "Validate every task",
      "Verify the changed tasks from scratch",
      "Refuse a committed record this toolkit did not produce for these inputs",
    ]) as [string, string, string];
    const job = async (): Promise<{ code: number; out: string }> => {
      // a fresh checkout of the pull request's head, as actions/checkout makes it
      await git(repo, "reset", "-q", "--hard");
      await git(repo, "clean", "-q", "-fdx");
      const r = await execa("bash", ["-e", "-o", "pipefail", "-c", `${validate}\n${verify}\n${records}`], {
        cwd: repo,
        env: { ...env, BASE_SHA: base },
        reject: false,
        all: true,
      });
      return { code: r.exitCode ?? -1, out: String(r.all) };
    };

    // a pull request that changes pref-loss's instruction and forgets its record
    await appendFile(join(repo, "tasks", "pref-loss", "instruction.md"), "\nThe loss is a mean over the batch.\n");
    await git(repo, "commit", "-q", "-am", "pref-loss: say the loss is a mean");
    let r = await job();
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain("changed since " + base + " (" + base.slice(0, 12) + "): 1 of 2 tasks");
    expect(r.out).toContain("✓ pref-loss — ");
    expect(r.out).not.toContain("beam-search —");
    expect(r.out).toMatch(
      /::error file=tasks\/pref-loss\/verification\.json::the committed record's \.inputs\.task is "[^"]+", this toolkit's run gives "[^"]+"/,
    );

    // the contributor re-verifies and commits the record: the check passes
    expect((await runCli(["verify", join(repo, "tasks", "pref-loss")])).exitCode).toBe(0);
    await git(repo, "commit", "-q", "-am", "pref-loss: record");
    r = await job();
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("1/1 tasks verified");
    expect(r.out).not.toContain("::error");
  }, 120_000);
});
