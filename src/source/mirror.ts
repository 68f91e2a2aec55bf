import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { isGitDir } from "./git.js";
import { pathExists } from "../core/paths.js";

export interface MirrorLookup {
  /** The git directory found, if any. */
  gitDir?: string;
  /** Every place looked at, in order (for the error message). */
  tried: string[];
  /** Set when a folder held more than one git directory and none could be chosen. */
  ambiguous?: string[];
}

/**
 * Find a local copy of github.com/OWNER/NAME under a mirror folder, in this order:
 * DIR/OWNER+NAME (itself a git dir, or holding exactly one git dir at depth <= 2,
 * e.g. DIR/OWNER+NAME/repo or DIR/OWNER+NAME/repo/.git), DIR/OWNER+NAME/repo,
 * DIR/OWNER/NAME.git, DIR/OWNER/NAME (bare, or a work tree with .git).
 * The OWNER+NAME folder is also matched case-insensitively, as GitHub names are.
 */
export async function findMirrorGitDir(mirrorDir: string, owner: string, name: string): Promise<MirrorLookup> {
  const tried: string[] = [];
  const plus = await findEntry(mirrorDir, `${owner}+${name}`);
  tried.push(plus);
  if (await looksLikeGitDir(plus)) return confirm(plus, tried);
  if (await isDir(plus)) {
    const found = await findGitDirsBelow(plus, 2);
    if (found.length === 1) return confirm(found[0]!, tried);
    if (found.length > 1) return { tried, ambiguous: found };
  }
  const candidates = [join(plus, "repo"), join(mirrorDir, owner, `${name}.git`), join(mirrorDir, owner, name)];
  for (const c of candidates) {
    tried.push(c);
    if (await looksLikeGitDir(c)) return confirm(c, tried);
    if (await looksLikeGitDir(join(c, ".git"))) return confirm(join(c, ".git"), tried);
  }
  return { tried };
}

async function confirm(dir: string, tried: string[]): Promise<MirrorLookup> {
  return (await isGitDir(dir)) ? { gitDir: dir, tried } : { tried };
}

/** `dir/want`, or the entry of `dir` that matches it ignoring case; the exact path when neither exists. */
async function findEntry(dir: string, want: string): Promise<string> {
  const exact = join(dir, want);
  if (await pathExists(exact)) return exact;
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch {
    return exact;
  }
  const hit = names.find((n) => n.toLowerCase() === want.toLowerCase());
  return hit ? join(dir, hit) : exact;
}

async function findGitDirsBelow(root: string, depth: number): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string, left: number): Promise<void> {
    if (left === 0) return;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (!e.isDirectory()) continue;
      const p = join(dir, e.name);
      if (await looksLikeGitDir(p)) out.push(p);
      else await walk(p, left - 1);
    }
  }
  await walk(root, depth);
  return out;
}

/** Cheap file-system test (HEAD file + objects folder) before asking git. */
export async function looksLikeGitDir(dir: string): Promise<boolean> {
  try {
    const [head, objects] = await Promise.all([stat(join(dir, "HEAD")), stat(join(dir, "objects"))]);
    return head.isFile() && objects.isDirectory();
  } catch {
    return false;
  }
}

async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}
