import { mkdir, mkdtemp, readdir, rename, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { LmrError } from "../core/errors.js";
import { gitDirArgs, gitReason, isGitDir, resolveCommit, runGit, type GitResult } from "./git.js";
import { looksLikeGitDir } from "./mirror.js";
import { safeSegment, type RepoRef } from "./repo-url.js";
import { pathExists } from "../core/paths.js";

export function defaultCacheDir(): string {
  const env = process.env.LMR_CACHE;
  return env && env !== "" ? env : join(homedir(), ".cache", "lmr");
}

/** $CACHE/repos/<host>/<owner>/<name>.git */
export function cachePathFor(ref: RepoRef, cacheDir: string): string {
  return join(cacheDir, "repos", safeSegment(ref.host), safeSegment(ref.owner), `${safeSegment(ref.name)}.git`);
}

export interface CachedCommit {
  gitDir: string;
  commit: string;
  origin: "clone" | "cache";
  fetched: boolean;
}

interface ErrorPlace {
  file?: string;
  pointer: string;
}

const STALE_TMP_MS = 60 * 60 * 1000;

/**
 * Make sure the cache holds `commit` of `ref` and return where. A new clone is
 * made in a temp sibling and renamed into place, so a killed clone never leaves
 * a half cache entry. An entry that exists but is not a git repository is
 * reported (with a hint to delete it) rather than silently deleted: the cache
 * folder is configurable and may point somewhere we do not own.
 */
export async function ensureCachedCommit(ref: RepoRef, commit: string, cacheDir: string, place: ErrorPlace): Promise<CachedCommit> {
  const gitDir = cachePathFor(ref, cacheDir);
  let origin: "clone" | "cache" = "cache";
  if (await pathExists(gitDir)) {
    if (!(await looksLikeGitDir(gitDir)) || !(await isGitDir(gitDir))) {
      throw new LmrError({
        code: "upstream/cache-corrupt",
        message: `the clone cache entry ${gitDir} is not a valid git repository`,
        file: place.file,
        pointer: place.pointer,
        hint: `delete it (rm -rf '${gitDir}') and run again; it will be cloned afresh`,
      });
    }
  } else {
    await cloneIntoCache(ref, gitDir, place);
    origin = "clone";
  }

  const found = await resolveCommit(gitDir, commit);
  if (found) return { gitDir, commit: found, origin, fetched: false };

  await fetchInto(gitDir, ref, ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"], place);
  let after = await resolveCommit(gitDir, commit);
  if (!after && /^[0-9a-f]{40}$/i.test(commit)) {
    // Servers such as GitHub serve any reachable commit by its full SHA, even off every branch.
    const bySha = await runGit([...gitDirArgs(gitDir), "fetch", "--quiet", "--no-tags", ref.url, commit]);
    if (bySha.exitCode === 0) after = await resolveCommit(gitDir, commit);
  }
  if (!after) {
    throw new LmrError({
      code: "upstream/commit-not-found",
      message: `commit ${commit} not found in ${ref.url} (after fetching)`,
      file: place.file,
      pointer: place.pointer.replace(/\/repo$/, "/commit"),
      hint: "check the SHA (use the full 40-character SHA of a pushed commit), or that the commit was not force-pushed away",
    });
  }
  return { gitDir, commit: after, origin, fetched: true };
}

async function cloneIntoCache(ref: RepoRef, gitDir: string, place: ErrorPlace): Promise<void> {
  const parent = dirname(gitDir);
  await mkdir(parent, { recursive: true });
  await removeStaleTemps(parent, `.${basename(gitDir)}.tmp-`);
  const tmp = await mkdtemp(join(parent, `.${basename(gitDir)}.tmp-`));
  try {
    const r = await runGit(["clone", "--bare", "--quiet", ref.url, tmp]);
    if (r.exitCode !== 0) throw unreachable(ref, r, place);
    try {
      await rename(tmp, gitDir);
    } catch (err) {
      // Another process finished the same clone first: use theirs.
      if (!(await looksLikeGitDir(gitDir))) throw err;
      await rm(tmp, { recursive: true, force: true });
    }
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

async function fetchInto(gitDir: string, ref: RepoRef, refspecs: string[], place: ErrorPlace): Promise<void> {
  const r = await runGit([...gitDirArgs(gitDir), "fetch", "--quiet", ref.url, ...refspecs]);
  if (r.exitCode !== 0) throw unreachable(ref, r, place);
}

function unreachable(ref: RepoRef, r: GitResult, place: ErrorPlace): LmrError {
  const reason = gitReason(r);
  const notFound = /not found|does not appear to be a git repository|does not exist|Could not read from remote/i.test(reason);
  return new LmrError({
    code: notFound ? "upstream/not-found" : "upstream/unreachable",
    message: `cannot reach ${ref.url}: ${reason}`,
    file: place.file,
    pointer: place.pointer,
    hint: notFound
      ? "check the repository URL (public repositories only; no credentials are asked for)"
      : "check the network, or point --mirror / LMR_MIRROR at a local mirror of the repository",
  });
}

/** Temp folders left by clones that were killed; young ones may belong to a clone still running. */
async function removeStaleTemps(parent: string, prefix: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(parent);
  } catch {
    return;
  }
  for (const n of names.filter((x) => x.startsWith(prefix))) {
    const p = join(parent, n);
    try {
      if (Date.now() - (await stat(p)).mtimeMs > STALE_TMP_MS) await rm(p, { recursive: true, force: true });
    } catch {
      // gone already
    }
  }
}
