import { execa } from "execa";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ResolvedTask, TaskManifest, Upstream } from "../../src/manifest/types.js";

const ident = ["-c", "user.name=lmr test", "-c", "user.email=test@example.invalid", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"];

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await execa("git", [...ident, ...args], { cwd, env: { GIT_CONFIG_NOSYSTEM: "1", LC_ALL: "C" } });
  return String(r.stdout).trim();
}

const created: string[] = [];

export async function tempDir(label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `lmr-${label}-`));
  created.push(dir);
  return dir;
}

/** Remove every folder tempDir made (call from afterAll). */
export async function removeTempDirs(): Promise<void> {
  await Promise.all(created.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** Write files (path → content) under root, creating folders. */
export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), content);
  }
}

export interface FixtureRepo {
  dir: string;
  first: string;
  second: string;
}

/** A work tree with two commits: v1 then v2 of model.py, plus a sub-package and data. */
export async function makeRepo(label = "up"): Promise<FixtureRepo> {
  const dir = await tempDir(label);
  await git(dir, "init", "-q");
  await writeFiles(dir, {
    "model.py": "def loss(x):\n    return x * 2\n",
    "pkg/core/algo.py": "VALUE = 1\n",
    "pkg/README.md": "pkg\n",
    "data/big.txt": "x".repeat(5000) + "\n",
  });
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "first");
  const first = await git(dir, "rev-parse", "HEAD");
  await writeFiles(dir, { "model.py": "def loss(x):\n    return x * 3\n", "pkg/core/extra.py": "EXTRA = 2\n" });
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "second");
  const second = await git(dir, "rev-parse", "HEAD");
  return { dir, first, second };
}

export function taskWith(upstream: Upstream, dir: string): ResolvedTask {
  const manifest = { upstream } as unknown as TaskManifest;
  return { manifest, dir, manifestPath: join(dir, "task.json") };
}
