import { execa } from "execa";

export interface GitResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Environment for every git call: never prompt for credentials (a missing or
 * private repository must fail, not hang), and keep messages in English so
 * they can be matched.
 */
export function gitEnv(): Record<string, string> {
  return { GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "", SSH_ASKPASS: "", LC_ALL: "C", GIT_OPTIONAL_LOCKS: "0" };
}

/** Run git; a failure is a value (exitCode, stderr), not an exception. */
export async function runGit(args: string[], opts: { cwd?: string; input?: string; timeoutMs?: number } = {}): Promise<GitResult> {
  const r = await execa("git", args, {
    cwd: opts.cwd,
    input: opts.input,
    env: gitEnv(),
    reject: false,
    stripFinalNewline: true,
    timeout: opts.timeoutMs,
    maxBuffer: 512 * 1024 * 1024,
  });
  const exitCode = typeof r.exitCode === "number" ? r.exitCode : 128;
  const stderr = r.timedOut ? `${String(r.stderr)}\ngit timed out after ${opts.timeoutMs} ms` : String(r.stderr);
  return { exitCode, stdout: String(r.stdout), stderr };
}

/** Arguments that point git at a git directory (bare, or the .git of a work tree). */
export function gitDirArgs(gitDir: string): string[] {
  return [`--git-dir=${gitDir}`];
}

/** Full SHA of `rev^{commit}` in `gitDir`, or undefined when it is not there. */
export async function resolveCommit(gitDir: string, rev: string): Promise<string | undefined> {
  const r = await runGit([...gitDirArgs(gitDir), "rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
  return r.exitCode === 0 && /^[0-9a-f]{40,64}$/.test(r.stdout.trim()) ? r.stdout.trim() : undefined;
}

/** True when `dir` looks like a git directory git itself accepts (HEAD, objects, refs). */
export async function isGitDir(dir: string): Promise<boolean> {
  const r = await runGit([...gitDirArgs(dir), "rev-parse", "--git-dir"]);
  return r.exitCode === 0;
}

/** Last meaningful line of git's stderr, for error messages. */
export function gitReason(r: GitResult): string {
  const lines = r.stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("hint:"));
  const fatal = lines.find((l) => l.startsWith("fatal:") || l.startsWith("error:"));
  return (fatal ?? lines[lines.length - 1] ?? `git exited with ${r.exitCode}`).replace(/^(fatal|error): /, "");
}
