import { execa } from "execa";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root (…/test/helpers → …). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const UPSTREAMS = join(REPO_ROOT, "test", "fixtures", "upstreams");
export const EXAMPLE_TASKS = join(REPO_ROOT, "examples", "tasks");

const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "lmr fixtures",
  GIT_AUTHOR_EMAIL: "fixtures@example.invalid",
  GIT_COMMITTER_NAME: "lmr fixtures",
  GIT_COMMITTER_EMAIL: "fixtures@example.invalid",
  // fixed dates: the same fixture gives the same commit SHA on every run
  GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
  GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
  LC_ALL: "C",
};

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await execa("git", ["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", ...args], { cwd, env: GIT_ENV });
  return String(r.stdout).trim();
}

const madeDirs: string[] = [];

/** A new temp folder, removed by `removeTempDirs` (call it in afterAll). */
export async function makeTempDir(label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `lmr-${label}-`));
  madeDirs.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  const dirs = madeDirs.splice(0);
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
}

/** Write files (relative path → content) under `root`, creating folders. */
export async function writeFiles(root: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), content);
  }
}

export interface GitFixtureOptions {
  /** Files added to the copy before the commit (e.g. leftovers a careless upstream committed). */
  extraFiles?: Record<string, string | Uint8Array>;
  /** Runs on the copy before the commit, for changes that need real tools (e.g. compiling .pyc). */
  before?: (dir: string) => Promise<void>;
}

/**
 * Copies a fixture folder to a temp dir and commits it as the only commit of a
 * new repository. The commit is deterministic (fixed author, dates).
 */
export async function makeGitRepo(fixtureDir: string, opts: GitFixtureOptions = {}): Promise<{ dir: string; commit: string }> {
  const dir = await makeTempDir("upstream");
  await cp(fixtureDir, dir, { recursive: true });
  if (opts.extraFiles) await writeFiles(dir, opts.extraFiles);
  if (opts.before) await opts.before(dir);
  await git(dir, "init", "-q");
  await git(dir, "add", "-A", "--force");
  await git(dir, "commit", "-q", "-m", "fixture");
  return { dir, commit: await git(dir, "rev-parse", "HEAD") };
}

/**
 * Lays out a mirror the way `--mirror` expects for https://github.com/OWNER/NAME:
 * MIRROR/OWNER+NAME/repo.git, a bare clone of `repoDir`.
 */
export async function addToMirror(mirrorDir: string, repoDir: string, owner: string, name: string): Promise<string> {
  const target = join(mirrorDir, `${owner}+${name}`, "repo.git");
  await mkdir(dirname(target), { recursive: true });
  await git(mirrorDir, "clone", "-q", "--bare", repoDir, target);
  return target;
}

/** The Python the tests run (LMR_PYTHON, else python3), as the toolkit itself chooses. */
export function pythonBin(): string {
  return process.env.LMR_PYTHON && process.env.LMR_PYTHON !== "" ? process.env.LMR_PYTHON : "python3";
}

/**
 * Leftovers that leak a reference: a real compiled .pyc of `pyFile` in __pycache__
 * and a Jupyter checkpoint copy of `notebook` (both made at run time, never committed
 * to this repository). Paths are relative to `dir`.
 */
export async function addLeftovers(dir: string, pyFile: string, notebook?: string): Promise<void> {
  const script = "import py_compile, sys; py_compile.compile(sys.argv[1], doraise=True)";
  await execa(pythonBin(), ["-c", script, pyFile], { cwd: dir });
  if (notebook) {
    const folder = join(dir, dirname(notebook), ".ipynb_checkpoints");
    const base = notebook.slice(notebook.lastIndexOf("/") + 1).replace(/\.ipynb$/, "");
    await mkdir(folder, { recursive: true });
    await cp(join(dir, notebook), join(folder, `${base}-checkpoint.ipynb`));
  }
}
