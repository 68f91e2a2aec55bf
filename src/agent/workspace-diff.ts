import { spawn } from "node:child_process";
import { lstat, readdir } from "node:fs/promises";
import { LmrError } from "../core/errors.js";

/**
 * The masked baseline as a git commit whose git folder lies outside the
 * agent's sandbox (it cannot rewrite the baseline), and the workspace diffed
 * against it after the run: a plain unified diff with a/ b/ paths relative to
 * the workspace root, new, changed and deleted files alike.
 */
export interface Baseline {
  gitDir: string;
  workspace: string;
  files: number;
}

function git(gitDir: string, workTree: string, args: string[], home: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      "git",
      [
        `--git-dir=${gitDir}`,
        `--work-tree=${workTree}`,
        "-c",
        "core.autocrlf=false",
        "-c",
        "core.fileMode=true",
        "-c",
        "core.excludesFile=/dev/null",
        "-c",
        "user.name=lmr",
        "-c",
        "user.email=lmr@localhost",
        ...args,
      ],
      {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", LANG: "C.UTF-8" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const out: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", (e) =>
      reject(
        new LmrError({ code: "agent/git-missing", message: `cannot run git: ${e.message}`, hint: "install git: the agent's changes are taken with git diff" }),
      ),
    );
    child.on("close", (code) => resolvePromise({ code: code ?? 1, stdout: Buffer.concat(out).toString("utf8"), stderr: err }));
  });
}

async function must(gitDir: string, workTree: string, args: string[], home: string): Promise<string> {
  const r = await git(gitDir, workTree, args, home);
  if (r.code !== 0) throw new LmrError({ code: "agent/git-failed", file: workTree, message: `git ${args[0]} failed (exit ${r.code}): ${r.stderr.trim()}` });
  return r.stdout;
}

/** Commits the workspace as it is now; every file, ignored ones too (the workspace's .gitignore decides nothing). */
export async function commitBaseline(gitDir: string, workspace: string, home: string): Promise<Baseline> {
  await must(gitDir, workspace, ["init", "-q"], home);
  await must(gitDir, workspace, ["add", "-A", "-f", "."], home);
  await must(gitDir, workspace, ["commit", "-q", "--allow-empty", "--no-verify", "-m", "masked baseline"], home);
  const files = (await must(gitDir, workspace, ["ls-files", "-z"], home)).split("\0").filter(Boolean).length;
  return { gitDir, workspace, files };
}

export type WorkspaceChange = { kind: "patch"; patch: string; changed: string[] } | { kind: "deleted"; reason: string };

/**
 * What the agent did to its workspace. A workspace that is gone, or that kept
 * none of the baseline's files, is reported as deleted (a patch deleting
 * everything would only fail the tests with a misleading message).
 */
export async function diffWorkspace(b: Baseline, home: string): Promise<WorkspaceChange> {
  const st = await lstat(b.workspace).catch(() => undefined);
  if (!st?.isDirectory()) return { kind: "deleted", reason: "the agent deleted its workspace folder" };
  const left = await readdir(b.workspace);
  await must(b.gitDir, b.workspace, ["add", "-A", "-f", "."], home);
  const status = await must(b.gitDir, b.workspace, ["diff", "--cached", "--no-renames", "--name-status", "-z", "HEAD"], home);
  const parts = status.split("\0").filter(Boolean);
  const changed: string[] = [];
  let deleted = 0;
  for (let i = 0; i + 1 < parts.length; i += 2) {
    changed.push(parts[i + 1]!);
    if (parts[i] === "D") deleted++;
  }
  if (b.files > 0 && deleted === b.files) {
    return {
      kind: "deleted",
      reason: `the agent deleted its workspace: none of its ${b.files} files is left${left.length > 0 ? ` (${left.length} new entr${left.length === 1 ? "y" : "ies"} in their place)` : ""}`,
    };
  }
  const patch = await must(
    b.gitDir,
    b.workspace,
    ["diff", "--cached", "--no-renames", "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/", "HEAD"],
    home,
  );
  return { kind: "patch", patch, changed };
}
