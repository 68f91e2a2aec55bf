import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { extname, join, resolve } from "node:path";
import { isLmrError, LmrError } from "../core/errors.js";
import { detectLicense, LICENSE_FILES } from "../manifest/license.js";
import type { ResolvedTask, TaskManifest, Upstream } from "../manifest/types.js";
import { listSupportedExtensions } from "../mask/registry.js";
import { runGit } from "../source/git.js";
import { materializeUpstream } from "../source/materialize.js";
import type { SourceOptions } from "../source/types.js";
import { usageError } from "./choices.js";

/** What `--repo` names: a git URL, or a local folder. */
export type RepoInput = { kind: "url"; url: string } | { kind: "path"; abs: string; raw: string };

/** A checked-out upstream to pick the target from; `close()` removes the temp copy. */
export interface UpstreamView {
  input: RepoInput;
  /** Full SHA of the checked-out commit; undefined for a local folder taken as it is. */
  commit?: string;
  /** The files of the upstream at that commit. */
  treeDir: string;
  /** Files a masker supports (.py), relative, '/'-separated, sorted. */
  sourceFiles: string[];
  /** SPDX id read from the licence file, when recognised. */
  license?: string;
  /** The licence file found at the top of the tree, recognised or not. */
  licenseFile?: string;
  close(): Promise<void>;
}

const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
const SCP_LIKE = /^[\w.-]+@[\w.-]+:/;

/** URL or folder, decided from the text alone (no IO). */
export function classifyRepo(raw: string, cwd: string): RepoInput {
  const v = raw.trim();
  if (URL_LIKE.test(v) || SCP_LIKE.test(v)) return { kind: "url", url: v };
  return { kind: "path", abs: resolve(cwd, v), raw: v };
}

export async function checkRepoFolder(input: RepoInput): Promise<void> {
  if (input.kind !== "path") return;
  const ok = await stat(input.abs).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!ok)
    throw usageError(
      "--repo",
      `'${input.raw}' is neither a git URL nor a folder (looked for ${input.abs})`,
      "give https://github.com/OWNER/NAME or the path of a local checkout",
    );
}

/** True when the folder is inside a git work tree (so a commit can pin it). */
export async function isInGitRepo(abs: string): Promise<boolean> {
  const r = await runGit(["-C", abs, "rev-parse", "--is-inside-work-tree"]);
  return r.exitCode === 0 && r.stdout.trim() === "true";
}

/** "abc1234 subject" lines of the latest commits of a local repository, newest first. */
async function listRecentCommits(abs: string, n = 5): Promise<string[]> {
  const r = await runGit(["-C", abs, "log", `-${n}`, "--format=%h %s"]);
  return r.exitCode === 0 ? r.stdout.split("\n").filter((l) => l !== "") : [];
}

/**
 * Check out the upstream at `commit` (a full or short SHA, or any revision)
 * into a temp folder and look at it: the source files a target can be taken
 * from and the licence. Errors name the flag that caused them.
 */
export async function openUpstream(input: RepoInput, commit: string | undefined, opts: SourceOptions & { cwd: string }): Promise<UpstreamView> {
  const upstream: Upstream =
    input.kind === "url"
      ? { repo: input.url, commit: commit ?? "HEAD", license: "NOASSERTION" }
      : { path: input.abs, license: "NOASSERTION", ...(commit !== undefined ? { commit } : {}) };
  const task: ResolvedTask = { manifest: { upstream } as TaskManifest, dir: opts.cwd, manifestPath: "(lmr new)" };
  const tmp = await mkdtemp(join(tmpdir(), "lmr-new-"));
  const treeDir = join(tmp, "tree");
  const close = (): Promise<void> => rm(tmp, { recursive: true, force: true });
  try {
    const got = await materializeUpstream(task, treeDir, {
      ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}),
      ...(opts.mirror ? { mirror: opts.mirror } : {}),
    });
    const sourceFiles = await listSourceFiles(treeDir);
    const lic = await findLicense(treeDir);
    return { input, ...(got.commit !== undefined ? { commit: got.commit } : {}), treeDir, sourceFiles, ...lic, close };
  } catch (err) {
    await close();
    throw await explainSourceError(err, input, commit);
  }
}

async function explainSourceError(err: unknown, input: RepoInput, commit: string | undefined): Promise<unknown> {
  if (!isLmrError(err)) return err;
  const where = input.kind === "url" ? input.url : input.raw;
  if (err.code === "upstream/commit-not-found") {
    const recent = input.kind === "path" ? await listRecentCommits(input.abs) : [];
    const hint = recent.length > 0 ? `recent commits: ${recent.join("; ")}` : `list them with: git ls-remote ${where}`;
    return usageError("--commit", `'${commit}' is not a commit of ${where}`, hint, "new/commit-not-found");
  }
  if (err.code === "upstream/not-git") {
    return usageError(
      "--commit",
      `${where} is not in a git repository, so it has no commit '${commit}'`,
      "leave out --commit to take the folder as it is, or point --repo at a git checkout",
      "new/commit-not-found",
    );
  }
  const flag = err.pointer === "/upstream/commit" ? "--commit" : "--repo";
  return new LmrError({ code: err.code, message: `${flag} ${where}: ${err.message}`, ...(err.hint ? { hint: err.hint } : {}), cause: err });
}

/** Files under `root` that a masker supports, skipping hidden folders and caches. */
async function listSourceFiles(root: string): Promise<string[]> {
  const exts = new Set(listSupportedExtensions());
  const out: string[] = [];
  async function walk(dir: string, rel: string): Promise<void> {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (e.name.startsWith(".") || e.name === "__pycache__" || e.name === "node_modules") continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(join(dir, e.name), r);
      else if (e.isFile() && exts.has(extname(e.name).toLowerCase())) out.push(r);
    }
  }
  await walk(root, "");
  return out.sort();
}

/** The licence file at the top of the tree and the SPDX id its text names. */
async function findLicense(root: string): Promise<{ license?: string; licenseFile?: string }> {
  const names = await readdir(root);
  for (const wanted of LICENSE_FILES) {
    const name = names.find((n) => n.toLowerCase() === wanted.toLowerCase());
    if (name === undefined) continue;
    const text = await readFile(join(root, name), "utf8").catch(() => "");
    const license = detectLicense(text);
    return { licenseFile: name, ...(license !== undefined ? { license } : {}) };
  }
  return {};
}
