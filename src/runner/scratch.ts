import { sweepPrefix } from "./trusted-scratch.js";
import { copyFile, lstat, mkdir, mkdtemp, readdir, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { LmrError } from "../core/errors.js";
import { checkRelativePath } from "../core/paths.js";

/**
 * A run's private folder. `root` is the tree copy: the candidate's working folder, where the
 * code under test lives. `oracleRoot` is the tests' rootdir: it holds the grader at `mountDir`
 * and nothing of the tree. `support` holds the grader files the task lets the candidate see
 * (its set-up and helpers), `bridge` the socket the two talk over. `home`/`tmp` are the
 * candidate's HOME/TMPDIR and `oracleHome`/`oracleTmp` the tests' where no sandbox gives a
 * private /tmp.
 */
export interface Scratch {
  dir: string;
  root: string;
  oracleRoot: string;
  mountDir: string;
  support: string;
  bridge: string;
  home: string;
  tmp: string;
  oracleHome: string;
  oracleTmp: string;
  /** Bytes of the tree copy (for its disk quota). */
  treeBytes: number;
  /** Tree files dropped from the copy because they could hijack Python or pytest (relative paths). */
  removed: string[];
}

/** The layout options of prepareScratch. */
export interface ScratchLayout {
  /** Grader-relative files the candidate may see (its set-up, helper modules), copied flat into `support`. */
  candidateFiles?: string[];
}

/** Never copied from either side: VCS data and bytecode (a stale .pyc could stand in for a masked source). */
function isJunk(name: string, isDir: boolean): boolean {
  if (isDir) return name === ".git" || name === "__pycache__";
  return name === ".git" || name.endsWith(".pyc") || name.endsWith(".pyo");
}

/**
 * Tree files that change how Python or pytest start. pytest runs with `-c` on
 * our own ini, so pyproject.toml / setup.cfg / tox.ini are not read and stay
 * (code may read its own metadata); conftest.py and sitecustomize are code that
 * would run before or around the grader and are dropped.
 */
export function isHijackFile(name: string): boolean {
  return (
    name === "conftest.py" ||
    name === "pytest.ini" ||
    name === ".pytest.ini" ||
    name === "sitecustomize.py" ||
    name === "usercustomize.py" ||
    name.endsWith(".pth")
  );
}

/**
 * Copy `src` into `dst` (created): regular files keep their mode, symlinks are
 * copied as links (never followed), sockets/FIFOs/devices are skipped.
 */
export async function copyTree(src: string, dst: string, drop: (rel: string, name: string, isDir: boolean) => boolean, rel = ""): Promise<void> {
  await mkdir(dst, { recursive: true });
  const entries = await readdir(src, { withFileTypes: true });
  await Promise.all(
    entries.map(async (e) => {
      const r = rel ? `${rel}/${e.name}` : e.name;
      const from = join(src, e.name);
      const to = join(dst, e.name);
      if (e.isDirectory()) {
        if (!drop(r, e.name, true)) await copyTree(from, to, drop, r);
      } else if (drop(r, e.name, false)) {
        return;
      } else if (e.isFile()) {
        await copyFile(from, to);
      } else if (e.isSymbolicLink()) {
        await symlink(await readlink(from), to);
      }
    }),
  );
}

/**
 * Remove whatever the tree copy has at `mount` and make every parent of it a
 * real directory, so the grader copy cannot be redirected through a symlink.
 */
async function clearMount(root: string, mount: string): Promise<string> {
  let dir = root;
  const parts = mount.split("/");
  for (const [i, part] of parts.entries()) {
    dir = join(dir, part);
    const st = await lstat(dir).catch(() => undefined);
    const last = i === parts.length - 1;
    if (st && (last || !st.isDirectory())) await rm(dir, { recursive: true, force: true });
    if (!last) await mkdir(dir, { recursive: true });
  }
  return dir;
}

export async function prepareScratch(
  tree: string,
  grader: string,
  mount: string,
  overlay: Record<string, string> = {},
  parent: string = tmpdir(),
  layout: ScratchLayout = {},
): Promise<Scratch> {
  const bad = checkRelativePath(mount);
  if (bad) {
    throw new LmrError({ code: "run/bad-mount", message: `mount "${mount}": ${bad}`, hint: "use a plain relative folder name such as lmr_tests" });
  }
  for (const [label, p] of [
    ["tree", tree],
    ["grader", grader],
  ] as const) {
    const st = await lstat(p).catch(() => undefined);
    if (!st?.isDirectory()) {
      throw new LmrError({ code: "run/no-dir", message: `${label} folder not found or not a directory`, file: p });
    }
  }
  const dir = await mkdtemp(join(parent, "lmr-run-"));
  let bridge: string | undefined;
  try {
    const root = join(dir, "tree");
    const removed: string[] = [];
    await copyTree(tree, root, (rel, name, isDir) => {
      if (isJunk(name, isDir)) return true;
      if (!isDir && isHijackFile(name)) {
        removed.push(rel);
        return true;
      }
      return false;
    });
    for (const [rel, content] of Object.entries(overlay)) {
      const why = checkRelativePath(rel);
      if (why) throw new LmrError({ code: "run/bad-overlay", message: `overlay file "${rel}": ${why}` });
      const to = await containedPath(root, rel);
      await rm(to, { force: true });
      await mkdir(dirname(to), { recursive: true });
      await writeFile(to, content);
    }
    const oracleRoot = join(dir, "oracle");
    await mkdir(oracleRoot);
    const mountDir = await clearMount(oracleRoot, mount);
    await copyTree(grader, mountDir, (_rel, name, isDir) => isJunk(name, isDir));
    const support = join(dir, "support");
    bridge = await makeSocketDir();
    const names = [join(dir, "home"), join(dir, "tmp"), join(dir, "ohome"), join(dir, "otmp")];
    await Promise.all([mkdir(support), ...names.map((n) => mkdir(n))]);
    for (const rel of layout.candidateFiles ?? []) {
      const why = checkRelativePath(rel);
      if (why) throw new LmrError({ code: "run/bad-candidate-file", message: `candidate file "${rel}": ${why}` });
      await copyFile(await containedPath(grader, rel), join(support, basename(rel)));
    }
    return {
      dir,
      root,
      oracleRoot,
      mountDir,
      support,
      bridge,
      home: names[0]!,
      tmp: names[1]!,
      oracleHome: names[2]!,
      oracleTmp: names[3]!,
      treeBytes: await treeSize(root),
      removed: removed.sort(),
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    if (bridge) await rm(bridge, { recursive: true, force: true });
    throw err;
  }
}

/** Removes a run's private folder and its socket folder. */
export async function removeScratch(s: Pick<Scratch, "dir" | "bridge">): Promise<void> {
  await Promise.all([rm(s.dir, { recursive: true, force: true }), rm(s.bridge, { recursive: true, force: true })]);
}

/**
 * A short private folder for unix sockets. A socket's path must fit sun_path (107 bytes), and a
 * run's scratch lives wherever its run folder is (`lmr eval --out` can be deep), so sockets never
 * go there. The name carries our pid: the sweep removes the folders of dead lmr processes.
 */
export async function makeSocketDir(): Promise<string> {
  const base = tmpdir().length <= SHORT_BASE_MAX ? tmpdir() : "/tmp";
  return mkdtemp(join(base, `${SOCKET_DIR_PREFIX}${process.pid}-`));
}

/** Removes the socket folders of dead lmr processes (a kill -9 skips every cleanup). */
export async function sweepSocketFolders(): Promise<void> {
  for (const base of new Set([tmpdir(), "/tmp"])) await sweepPrefix(SOCKET_DIR_PREFIX, base);
}

const SOCKET_DIR_PREFIX = "lmr-chan-";
/** A base longer than this would leave too little of sun_path for the socket's own name. */
const SHORT_BASE_MAX = 48;

/**
 * `root/rel`, checked component by component: no component may be a symlink, so a path that
 * goes through a link (to the reference, another sample's folder, the host) is refused rather
 * than followed. Missing components are fine (they are about to be made).
 */
async function containedPath(root: string, rel: string): Promise<string> {
  let at = root;
  for (const part of rel.split("/")) {
    at = join(at, part);
    const st = await lstat(at).catch(() => undefined);
    if (st?.isSymbolicLink()) {
      throw new LmrError({
        code: "run/symlink-path",
        message: `"${rel}" goes through a symbolic link (${at.slice(root.length + 1)})`,
        hint: "submissions and graders may not place files through links",
      });
    }
  }
  return at;
}

async function treeSize(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += await treeSize(p);
    else if (e.isFile()) total += (await lstat(p)).size;
  }
  return total;
}
