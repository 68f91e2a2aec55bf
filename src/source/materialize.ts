import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { LmrError } from "../core/errors.js";
import { writeDirAtomic } from "../core/fs-atomic.js";
import { checkRelativePath } from "../core/paths.js";
import { isUrlUpstream, type ResolvedTask, type Upstream } from "../manifest/types.js";
import { extractCommit } from "./archive.js";
import { defaultCacheDir, ensureCachedCommit } from "./cache.js";
import { copyFolder } from "./copy-folder.js";
import { gitReason, resolveCommit, runGit } from "./git.js";
import { findMirrorGitDir } from "./mirror.js";
import { parseRepoUrl, type RepoRef } from "./repo-url.js";
import type { MaterializedSource, SourceOptions } from "./types.js";

type UrlUpstream = Extract<Upstream, { repo: string }>;
type PathUpstream = Extract<Upstream, { path: string }>;

/**
 * Write the task's upstream at its pinned commit into `destDir` (absent or
 * empty): just the files, no .git; only `upstream.subdir` when set. The tree is
 * built in a temp sibling and moved into place, so a failure leaves nothing.
 */
export async function materializeUpstream(task: ResolvedTask, destDir: string, opts: SourceOptions = {}): Promise<MaterializedSource> {
  const file = task.manifestPath;
  await assertEmptyDest(destDir, file);
  const upstream = task.manifest.upstream;
  if (upstream.subdir !== undefined) {
    const why = checkRelativePath(upstream.subdir);
    if (why)
      throw new LmrError({
        code: "upstream/subdir-invalid",
        message: `upstream.subdir '${upstream.subdir}': ${why}`,
        file,
        pointer: "/upstream/subdir",
        hint: 'give a relative folder inside the repository, e.g. "src"',
      });
  }
  return isUrlUpstream(upstream) ? materializeUrl(upstream, destDir, file, opts) : materializePath(upstream, task.dir, destDir, file);
}

async function materializeUrl(up: UrlUpstream, destDir: string, file: string, opts: SourceOptions): Promise<MaterializedSource> {
  const ref = parseRepoUrl(up.repo);
  if (!ref)
    throw new LmrError({
      code: "upstream/url-invalid",
      message: `upstream.repo '${up.repo}' is not a git URL`,
      file,
      pointer: "/upstream/repo",
      hint: "use https://github.com/OWNER/NAME (or a file:// URL for local tests)",
    });
  const mirror = opts.mirror ?? nonEmpty(process.env.LMR_MIRROR);
  if (mirror !== undefined && ref.github) {
    const gitDir = await locateMirror(mirror, ref, file, "/upstream/repo");
    const commit = await resolveCommit(gitDir, up.commit);
    if (!commit) {
      throw new LmrError({
        code: "upstream/commit-not-found",
        message: `commit ${up.commit} not found in ${gitDir} (mirror of ${up.repo})`,
        file,
        pointer: "/upstream/commit",
        hint: "the mirror snapshot may be older than the commit (refresh it) or the SHA is wrong; no network is used when a mirror is given",
      });
    }
    const missing = await extractInto(gitDir, commit, up.subdir, destDir, file);
    return { commit, origin: "mirror", location: up.repo, gitDir, ...(missing.length > 0 ? { missing } : {}) };
  }
  const cached = await ensureCachedCommit(ref, up.commit, opts.cacheDir ?? defaultCacheDir(), { file, pointer: "/upstream/repo" });
  const missing = await extractInto(cached.gitDir, cached.commit, up.subdir, destDir, file);
  return {
    commit: cached.commit,
    origin: cached.origin,
    location: up.repo,
    gitDir: cached.gitDir,
    fetched: cached.fetched,
    ...(missing.length > 0 ? { missing } : {}),
  };
}

async function materializePath(up: PathUpstream, taskDir: string, destDir: string, file: string): Promise<MaterializedSource> {
  const root = resolve(taskDir, up.path);
  if (!(await isDirectory(root))) {
    throw new LmrError({
      code: "upstream/path-missing",
      message: `upstream.path '${up.path}' (${root}) is not a folder`,
      file,
      pointer: "/upstream/path",
      hint: "the path is relative to the task folder; check it exists",
    });
  }
  if (up.commit === undefined) {
    const src = up.subdir ? join(root, up.subdir) : root;
    if (!(await isDirectory(src)))
      throw new LmrError({
        code: "upstream/subdir-missing",
        message: `upstream.subdir '${up.subdir}' does not exist in ${root}`,
        file,
        pointer: "/upstream/subdir",
      });
    await writeDirAtomic(destDir, async (tmp) => {
      await copyFolder(src, tmp);
    });
    return { origin: "path", location: root };
  }
  const repo = await locateLocalRepo(root);
  if (!repo) {
    throw new LmrError({
      code: "upstream/not-git",
      message: `upstream.commit is set but ${root} is not in a git repository`,
      file,
      pointer: "/upstream/commit",
      hint: "remove upstream.commit to copy the folder as it is, or point upstream.path at a git work tree",
    });
  }
  const commit = await resolveCommit(repo.gitDir, up.commit);
  if (!commit)
    throw new LmrError({
      code: "upstream/commit-not-found",
      message: `commit ${up.commit} not found in ${root}`,
      file,
      pointer: "/upstream/commit",
      hint: "check the SHA with `git log` in that repository",
    });
  const subdir = [repo.prefix, up.subdir ?? ""].filter((s) => s !== "").join("/") || undefined;
  const missing = await extractInto(repo.gitDir, commit, subdir, destDir, file);
  return { commit, origin: "path", location: root, gitDir: repo.gitDir, ...(missing.length > 0 ? { missing } : {}) };
}

/**
 * The default-branch head SHA of a repository URL (through the mirror when one
 * is set and serves it, else `git ls-remote`) or of a local git folder.
 */
export async function resolveHeadCommit(repoUrlOrPath: string, opts: SourceOptions & { cwd?: string } = {}): Promise<string> {
  const ref = /^[a-z][a-z0-9+.-]*:\/\//i.test(repoUrlOrPath) || /^[\w.-]+@[\w.-]+:/.test(repoUrlOrPath) ? parseRepoUrl(repoUrlOrPath) : undefined;
  if (ref) {
    const mirror = opts.mirror ?? nonEmpty(process.env.LMR_MIRROR);
    if (mirror !== undefined && ref.github) {
      const gitDir = await locateMirror(mirror, ref, undefined, undefined);
      const head = await resolveCommit(gitDir, "HEAD");
      if (head) return head;
      throw new LmrError({ code: "upstream/mirror-no-head", message: `the mirror ${gitDir} has no HEAD commit`, hint: "refresh the mirror snapshot" });
    }
    const r = await runGit(["ls-remote", ref.url, "HEAD"]);
    const sha = /^([0-9a-f]{40,64})\s+HEAD$/m.exec(r.stdout)?.[1];
    if (r.exitCode === 0 && sha) return sha;
    throw new LmrError({
      code: "upstream/unreachable",
      message: `cannot read the head commit of ${ref.url}: ${r.exitCode === 0 ? "no HEAD advertised" : gitReason(r)}`,
      hint: "check the URL and the network, or set --mirror / LMR_MIRROR",
    });
  }
  const root = resolve(opts.cwd ?? process.cwd(), repoUrlOrPath);
  const repo = await locateLocalRepo(root);
  const head = repo ? await resolveCommit(repo.gitDir, "HEAD") : undefined;
  if (head) return head;
  throw new LmrError({
    code: "upstream/not-git",
    message: `${root} is not a git repository with a commit`,
    hint: "give a repository URL or the path of a git work tree",
  });
}

async function locateMirror(mirror: string, ref: RepoRef, file: string | undefined, pointer: string | undefined): Promise<string> {
  const found = await findMirrorGitDir(mirror, ref.owner, ref.name);
  if (found.gitDir) return found.gitDir;
  if (found.ambiguous) {
    throw new LmrError({
      code: "upstream/mirror-ambiguous",
      message: `the mirror holds several git directories for ${ref.owner}/${ref.name}: ${found.ambiguous.join(", ")}`,
      file,
      pointer,
      hint: "keep only one of them",
    });
  }
  throw new LmrError({
    code: "upstream/mirror-missing",
    message: `no mirror of ${ref.url} in ${mirror}; tried ${found.tried.join(", ")}`,
    file,
    pointer,
    hint: `bring the repository into the mirror (e.g. as ${found.tried[0]}), or unset LMR_MIRROR / drop --mirror to clone over the network`,
  });
}

async function extractInto(gitDir: string, commit: string, subdir: string | undefined, destDir: string, file: string): Promise<string[]> {
  let missing: string[] = [];
  await writeDirAtomic(destDir, async (tmp) => {
    const r = await extractCommit(gitDir, commit, subdir, tmp);
    if (!r.ok) {
      throw r.reason === "subdir-missing"
        ? new LmrError({
            code: "upstream/subdir-missing",
            message: `upstream.subdir: ${r.detail}`,
            file,
            pointer: "/upstream/subdir",
            hint: "check the folder name at that commit (git ls-tree <commit>)",
          })
        : new LmrError({
            code: "upstream/extract-failed",
            message: `cannot write the tree of ${commit} from ${gitDir}: ${r.detail}`,
            file,
            pointer: "/upstream",
            hint: `the repository may be corrupt; if it is the clone cache, delete ${gitDir} and run again`,
          });
    }
    missing = r.missing;
  });
  return missing;
}

/** The git dir and the path of `dir` inside its work tree ("" at the top, or for a bare repository). */
async function locateLocalRepo(dir: string): Promise<{ gitDir: string; prefix: string } | undefined> {
  const r = await runGit(["-C", dir, "rev-parse", "--absolute-git-dir", "--is-bare-repository"]);
  if (r.exitCode !== 0) return undefined;
  const [gitDir, bare] = r.stdout.split("\n");
  if (!gitDir) return undefined;
  if (bare === "true") return { gitDir, prefix: "" };
  const p = await runGit(["-C", dir, "rev-parse", "--show-prefix"]);
  return { gitDir, prefix: p.exitCode === 0 ? p.stdout.trim().replace(/\/$/, "") : "" };
}

async function assertEmptyDest(destDir: string, file: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(destDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new LmrError({ code: "upstream/dest-unusable", message: `cannot use ${destDir} as the upstream tree folder: ${(err as Error).message}`, file });
  }
  if (entries.length > 0)
    throw new LmrError({
      code: "upstream/dest-not-empty",
      message: `the folder ${destDir} is not empty`,
      file,
      hint: "give a new or empty folder for the upstream tree",
    });
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s === "" ? undefined : s;
}
