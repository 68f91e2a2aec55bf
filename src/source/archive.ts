import { spawn, type ChildProcess } from "node:child_process";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { gitDirArgs, gitEnv, runGit } from "./git.js";

export type ExtractOutcome = { ok: true; missing: string[] } | { ok: false; reason: "subdir-missing" | "git-failed"; detail: string };

/**
 * Write the files of `commit` (or of its `subdir`) into the existing empty
 * folder `dest`, with no .git. `git archive | tar -x` is the fast path (about
 * 0.25 s for a 3,000-file, 64 MB tree here). Mirror snapshots may lack large
 * blobs; then the archive is redone without them and they are reported as
 * missing rather than failing the whole tree.
 */
export async function extractCommit(gitDir: string, commit: string, subdir: string | undefined, dest: string): Promise<ExtractOutcome> {
  const treeish = subdir ? `${commit}:${subdir}` : commit;
  // `<commit>:<path>^{tree}` would read "^{tree}" as part of the path; ask for the object type instead.
  const tree = await runGit([...gitDirArgs(gitDir), "cat-file", "-t", treeish]);
  const type = tree.stdout.trim();
  if (tree.exitCode !== 0 || !(type === "tree" || (!subdir && type === "commit"))) {
    return subdir
      ? { ok: false, reason: "subdir-missing", detail: `folder '${subdir}' does not exist at commit ${commit}` }
      : { ok: false, reason: "git-failed", detail: `commit ${commit} has no readable tree` };
  }
  const first = await archiveInto(gitDir, treeish, [], dest);
  if (first.ok) return { ok: true, missing: [] };

  const missing = await listMissingBlobs(gitDir, treeish);
  if (missing.length === 0) return { ok: false, reason: "git-failed", detail: first.detail };
  await emptyDir(dest);
  const excludes = missing.map((p) => `:(exclude,literal)${p}`);
  const second = await archiveInto(gitDir, treeish, [".", ...excludes], dest);
  return second.ok ? { ok: true, missing } : { ok: false, reason: "git-failed", detail: second.detail };
}

async function archiveInto(gitDir: string, treeish: string, pathspecs: string[], dest: string): Promise<{ ok: true } | { ok: false; detail: string }> {
  const args = [...gitDirArgs(gitDir), "archive", "--format=tar", treeish];
  if (pathspecs.length > 0) args.push("--", ...pathspecs);
  // tar reads git's stdout pipe directly: the bytes never pass through JS.
  const source = spawn("git", args, { env: { ...process.env, ...gitEnv() }, stdio: ["ignore", "pipe", "pipe"] });
  const sink = spawn("tar", ["-x", "--no-same-owner", "-C", dest], { stdio: [source.stdout, "ignore", "pipe"] });
  // Our copy of the pipe must go, or git would block instead of failing when tar stops reading.
  source.stdout.destroy();
  const [git, tar] = await Promise.all([finish(source), finish(sink)]);
  if (git.code !== 0) return { ok: false, detail: lastError(git.stderr) };
  if (tar.code !== 0) return { ok: false, detail: `tar: ${lastError(tar.stderr)}` };
  return { ok: true };
}

/** Exit status and the whole stderr (both the exit and the end of stderr are awaited). */
function finish(child: ChildProcess): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    let stderr = "";
    let code: number | undefined;
    let ended = child.stderr === null;
    const done = (): void => {
      if (code !== undefined && ended) resolve({ code, stderr });
    };
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stderr?.on("end", () => {
      ended = true;
      done();
    });
    child.on("error", (err) => resolve({ code: 127, stderr: err.message }));
    child.on("exit", (c, signal) => {
      code = c ?? 128;
      if (signal) stderr += `killed by ${signal}`;
      done();
    });
  });
}

/** Paths (relative to the tree) of blobs the object store does not have. */
async function listMissingBlobs(gitDir: string, treeish: string): Promise<string[]> {
  const ls = await runGit([...gitDirArgs(gitDir), "ls-tree", "-r", "-z", treeish]);
  if (ls.exitCode !== 0) return [];
  const entries: { sha: string; path: string }[] = [];
  for (const rec of ls.stdout.split("\0")) {
    const m = /^(\d+) blob ([0-9a-f]+)\t([\s\S]*)$/.exec(rec);
    if (m) entries.push({ sha: m[2]!, path: m[3]! });
  }
  if (entries.length === 0) return [];
  const check = await runGit([...gitDirArgs(gitDir), "cat-file", "--batch-check=%(objectname)"], {
    input: entries.map((e) => e.sha).join("\n") + "\n",
  });
  const absent = new Set(
    check.stdout
      .split("\n")
      .filter((l) => l.endsWith(" missing"))
      .map((l) => l.slice(0, -" missing".length)),
  );
  return entries.filter((e) => absent.has(e.sha)).map((e) => e.path);
}

async function emptyDir(dir: string): Promise<void> {
  for (const name of await readdir(dir)) await rm(join(dir, name), { recursive: true, force: true });
}

function lastError(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const err = lines.find((l) => l.startsWith("fatal:") || l.startsWith("error:")) ?? lines[lines.length - 1] ?? "failed";
  return err.replace(/^(fatal|error): /, "");
}
