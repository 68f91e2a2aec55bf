import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { LmrError } from "../core/errors.js";
import { gitReason, runGit } from "./git.js";
import { readManifest } from "../manifest/read.js";
import { asObject } from "../manifest/semantic.js";

/*
 * Which tasks' inputs changed between a git revision and the working tree, for
 * `lmr verify --changed-since REF` and `lmr validate --changed-since REF` (a pull
 * request's check verifies only what it touched). The rule, in order:
 *
 * 1. the task folder: any file under it added, changed or removed (task.json, the
 *    instruction, hints, paper text, tests, fixtures, alternatives, driver and
 *    generators, and verification.json: a record a change brings is a claim to check).
 *    Manifest paths never leave the task folder (lmr validate refuses '..'), so
 *    the folder holds every file the manifest names.
 * 2. the local upstream: any file under upstream.path (with its subdir) added,
 *    changed or removed. An upstream folder outside the git repository cannot be
 *    compared, so its tasks always count as changed. A URL upstream is pinned by
 *    its commit in task.json, which rule 1 covers.
 * 3. with `siblings` (verify's dataset-wide leak scan): a task in the same tasks
 *    folder over the same upstream as a task changed by 1 or 2, because its leak
 *    scan reads that task's reference (a new target may be exposed in its workspace).
 *
 * "Changed" is what `git diff REF` (committed, staged and unstaged changes to tracked
 * files, renames as a removal and an addition) and the untracked files git does
 * not ignore show. Toolkit changes are not task inputs: the scheduled full
 * re-verification covers them.
 */

interface ChangedTask {
  dir: string;
  /** Why it counts as changed: the first changed path of rules 1 and 2, or the sibling of rule 3. */
  reason: string;
}

export interface ChangedTasks {
  ref: string;
  /** The full SHA `ref` names. */
  commit: string;
  /** Changed tasks, in the order given. */
  changed: ChangedTask[];
  /** Task folders whose inputs are the same as at `ref`. */
  unchanged: string[];
}

interface RepoDiff {
  top: string;
  commit: string;
  /** Changed paths relative to the top of the work tree, '/'-separated. */
  paths: string[];
}

/**
 * The tasks among `dirs` whose inputs (see the rule above) changed since `ref`.
 * A `ref` that is not a commit, or task folders outside a git work tree, throw a
 * usage LmrError (exit 2).
 */
export async function changedTasksSince(dirs: string[], ref: string, opts: { siblings?: boolean } = {}): Promise<ChangedTasks> {
  if (ref.trim() === "" || ref.startsWith("-")) {
    throw new LmrError({
      code: "changed-since/bad-ref",
      message: `--changed-since needs a git revision, got '${ref}'`,
      hint: "name a commit, branch or tag, e.g. --changed-since origin/main",
    });
  }
  const repos = new Map<string, Promise<RepoDiff>>();
  const diffOf = async (dir: string): Promise<RepoDiff> => {
    const top = await workTreeTop(dir);
    let d = repos.get(top);
    if (!d) {
      d = diffSince(top, ref);
      repos.set(top, d);
    }
    return d;
  };

  interface Info {
    dir: string;
    real: string;
    upstreamKey: string | undefined;
    reason: string | undefined;
  }
  const infos: Info[] = [];
  let commit = "";
  for (const dir of dirs) {
    const abs = resolve(dir);
    const d = await diffOf(abs);
    commit = d.commit;
    const real = await realpath(abs);
    const upstream = await localUpstream(abs);
    let reason = firstUnder(d, real, "");
    if (reason === undefined && upstream?.folder !== undefined) {
      const folder = await realpath(upstream.folder).catch(() => upstream.folder!);
      const rel = relative(d.top, folder);
      if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel))
        reason = `its local upstream ${upstream.folder} is outside the git repository, so it cannot be compared`;
      else reason = firstUnder(d, folder, "upstream ");
    }
    infos.push({ dir, real, upstreamKey: upstream?.key, reason });
  }

  if (opts.siblings) {
    const direct = infos.filter((i) => i.reason !== undefined && i.upstreamKey !== undefined);
    for (const i of infos) {
      if (i.reason !== undefined || i.upstreamKey === undefined) continue;
      const by = direct.find((o) => o.upstreamKey === i.upstreamKey && dirname(o.real) === dirname(i.real));
      if (by) i.reason = `shares its upstream with the changed task ${relative(dirname(by.real), by.real)} (the leak scan reads that task's reference)`;
    }
  }
  return {
    ref,
    commit,
    changed: infos.filter((i) => i.reason !== undefined).map((i) => ({ dir: i.dir, reason: i.reason! })),
    unchanged: infos.filter((i) => i.reason === undefined).map((i) => i.dir),
  };
}

/** The first changed path under `folder`, as a reason, or undefined. */
function firstUnder(d: RepoDiff, folder: string, what: string): string | undefined {
  const rel = relative(d.top, folder).split(sep).join("/");
  const prefix = rel === "" ? "" : `${rel}/`;
  const hit = d.paths.find((p) => p.startsWith(prefix));
  return hit === undefined ? undefined : `${what}${hit} changed`;
}

async function workTreeTop(dir: string): Promise<string> {
  const r = await runGit(["rev-parse", "--show-toplevel"], { cwd: dir });
  if (r.exitCode !== 0 || r.stdout.trim() === "") {
    throw new LmrError({
      code: "changed-since/not-git",
      file: dir,
      message: `--changed-since: the task folder is not in a git work tree (${gitReason(r)})`,
      hint: "run it in a clone of the dataset repository, or leave out --changed-since",
    });
  }
  return realpath(r.stdout.trim());
}

async function diffSince(top: string, ref: string): Promise<RepoDiff> {
  const rev = await runGit(["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`], { cwd: top });
  const commit = rev.stdout.trim();
  if (rev.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(commit)) {
    throw new LmrError({
      code: "changed-since/bad-ref",
      message: `--changed-since: '${ref}' is not a commit of the repository at ${top}`,
      hint: "name a commit, branch or tag that the clone has (a CI checkout needs the base fetched, e.g. actions/checkout with fetch-depth: 0)",
    });
  }
  // the work tree against the commit: committed, staged and unstaged changes alike; a rename is a removal and an addition
  const diff = await runGit(["-c", "core.quotePath=false", "diff", "--name-only", "--no-renames", "--no-ext-diff", "-z", commit, "--"], { cwd: top });
  if (diff.exitCode !== 0)
    throw new LmrError({ code: "changed-since/git", message: `git diff ${commit} failed: ${gitReason(diff)}`, hint: "check the repository with git status" });
  const untracked = await runGit(["ls-files", "--others", "--exclude-standard", "-z"], { cwd: top });
  if (untracked.exitCode !== 0)
    throw new LmrError({ code: "changed-since/git", message: `git ls-files failed: ${gitReason(untracked)}`, hint: "check the repository with git status" });
  const split = (s: string): string[] => s.split("\0").filter((p) => p !== "");
  return { top, commit, paths: [...split(diff.stdout), ...split(untracked.stdout)].sort() };
}

/**
 * The task's upstream as rule 2 and 3 see it: its local folder (path with subdir) and a key
 * naming the upstream (the repository URL, or the local path), read leniently from the raw
 * manifest: an invalid manifest still counts as changed through its folder.
 */
async function localUpstream(dir: string): Promise<{ folder?: string; key: string } | undefined> {
  const raw = await readManifest(dir).catch(() => undefined);
  const u = asObject(asObject(raw?.data)?.upstream);
  if (!u) return undefined;
  if (typeof u.repo === "string")
    return {
      key: `repo:${u.repo
        .toLowerCase()
        .replace(/\.git$/, "")
        .replace(/\/+$/, "")}`,
    };
  if (typeof u.path !== "string") return undefined;
  const root = resolve(dir, u.path);
  const sub = typeof u.subdir === "string" ? u.subdir : "";
  return { folder: resolve(root, sub), key: `path:${root}` };
}
