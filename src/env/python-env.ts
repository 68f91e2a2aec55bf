import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import { writeJsonAtomic } from "../core/fs-atomic.js";
import { sha256 } from "../core/hash.js";
import type { PythonEnv } from "./types.js";

export interface ResolvePythonOptions {
  /** `--python PATH`: used as is (requirements are then the caller's business). */
  python?: string;
  /**
   * Interpreter to use when no --python is given: as is for tasks without requirements, else
   * the base of their virtualenvs (made with --system-site-packages, so packages the base has,
   * e.g. Debian's torch, are reused). Default env LMR_PYTHON, else `python3` on PATH.
   */
  base?: string;
  /** pip requirement strings; non-empty → a cached virtualenv. */
  requirements?: string[];
  /** Cache root (default $LMR_CACHE, else ~/.cache/lmr); envs live in `<cacheDir>/envs/<key>`. */
  cacheDir?: string;
}

interface Probe extends PythonEnv {
  pytest: string | null;
}

const MARKER = "lmr-env.json";
const PROBE = [
  "import json, sys",
  "try:",
  "    import pytest; v = pytest.__version__",
  "except Exception:",
  "    v = None",
  "print(json.dumps({'path': sys.executable, 'version': '.'.join(map(str, sys.version_info[:3])),",
  "                  'prefixes': sorted({sys.prefix, sys.base_prefix, sys.exec_prefix}), 'pytest': v}))",
].join("\n");

function run(
  file: string,
  args: string[],
  timeoutMs: number,
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string; error?: NodeJS.ErrnoException }> {
  return new Promise((resolvePromise) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024, env: env ?? process.env }, (error, stdout, stderr) => {
      const e = error as (NodeJS.ErrnoException & { code?: unknown }) | null;
      const code = e ? (typeof e.code === "number" ? e.code : null) : 0;
      resolvePromise({ code, stdout: String(stdout), stderr: String(stderr), ...(e ? { error: e } : {}) });
    });
  });
}

/**
 * What interpreters said, by the name they were asked under: verify asks the same one for each
 * task's runs and again for its fixtures (an interpreter start and `import pytest` each time).
 * Only answers about a path are kept (a bare name depends on PATH), and only while the file is there.
 */
const probed = new Map<string, Probe>();

/** Ask an interpreter who it is. Undefined when it does not run at all. */
async function probePython(python: string): Promise<Probe | undefined> {
  const known = probed.get(python);
  if (known && existsSync(python)) return known;
  const r = await run(python, ["-s", "-c", PROBE], 30_000);
  if (r.code !== 0) return undefined;
  try {
    const p = JSON.parse(r.stdout.trim().split("\n").pop() ?? "") as Probe;
    if (python.includes("/")) probed.set(python, p);
    return p;
  } catch {
    return undefined;
  }
}

async function requireInterpreter(python: string): Promise<Probe> {
  const p = await probePython(python);
  if (!p) {
    throw new LmrError({
      code: "env/python-not-found",
      message: `python interpreter "${python}" is missing or does not run`,
      hint: "pass --python PATH or set LMR_PYTHON to a working CPython 3",
    });
  }
  return p;
}

function requirePytest(p: Probe, what: string): PythonEnv {
  if (!p.pytest) {
    throw new LmrError({
      code: "env/pytest-missing",
      message: `pytest is not installed for ${what} (${p.path})`,
      hint: `run: ${p.path} -m pip install pytest`,
    });
  }
  return { path: p.path, version: p.version, prefixes: p.prefixes ?? [] };
}

/** Cache key of an environment: base interpreter, its version and the sorted requirements. */
export function envKey(base: { path: string; version: string }, requirements: string[]): string {
  const reqs = [...new Set(requirements.map((r) => r.trim()).filter(Boolean))].sort();
  return sha256(JSON.stringify({ python: base.version, base: base.path, requirements: reqs })).slice(0, 32);
}

/** The package pip could not install, read from its error text, or undefined. */
export function pipFailedPackage(stderr: string): string | undefined {
  const pats = [
    /No matching distribution found for ([^\s]+)/,
    /satisfies the requirement ([^\s]+)/,
    /Failed to build ([^\s]+)/,
    /ERROR: Could not install packages due to an OSError.*?([\w.-]+)/,
  ];
  for (const re of pats) {
    const m = re.exec(stderr);
    if (m?.[1]) return m[1];
  }
  return undefined;
}

async function readMarker(dir: string): Promise<PythonEnv | undefined> {
  try {
    const m = JSON.parse(await readFile(join(dir, MARKER), "utf8")) as { python?: string };
    if (!m.python) return undefined;
    const p = await probePython(m.python);
    return p?.pytest ? { path: p.path, version: p.version, prefixes: p.prefixes ?? [] } : undefined;
  } catch {
    return undefined;
  }
}

/** Venv scripts carry their folder in the shebang; point them at the final place before the rename. */
async function fixShebangs(binDir: string, from: string, to: string): Promise<void> {
  for (const name of await readdir(binDir).catch(() => [] as string[])) {
    const file = join(binDir, name);
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text?.startsWith(`#!${from}`)) await writeFile(file, `#!${to}${text.slice(2 + from.length)}`);
  }
}

async function buildEnv(base: Probe, requirements: string[], cacheRoot: string, key: string): Promise<PythonEnv> {
  const envs = join(cacheRoot, "envs");
  const final = join(envs, key);
  await mkdir(envs, { recursive: true });
  const tmp = await mkdtemp(join(envs, `.${key}.tmp-`));
  try {
    const venv = await run(base.path, ["-m", "venv", "--system-site-packages", "--without-pip", tmp], 300_000);
    if (venv.code !== 0) {
      throw new LmrError({
        code: "env/venv-failed",
        message: `python -m venv failed for ${base.path}: ${venv.stderr.trim().slice(-500)}`,
        hint: "install the venv module (Debian: apt-get install python3-venv)",
      });
    }
    const py = join(tmp, "bin", "python");
    const env = { ...process.env, PYTHONNOUSERSITE: "1", PIP_DISABLE_PIP_VERSION_CHECK: "1" };
    // A --system-site-packages venv can run the base interpreter's pip; bootstrap one only if there is none.
    if ((await run(py, ["-m", "pip", "--version"], 60_000, env)).code !== 0) {
      const ens = await run(py, ["-m", "ensurepip", "--default-pip"], 300_000, env);
      if (ens.code !== 0) {
        throw new LmrError({
          code: "env/pip-missing",
          message: `pip is not available for ${base.path}: ${ens.stderr.trim().slice(-300)}`,
          hint: "install pip for the base interpreter (Debian: apt-get install python3-pip)",
        });
      }
    }
    const wanted = base.pytest ? requirements : [...requirements, "pytest"];
    const pip = await run(py, ["-m", "pip", "install", "--no-input", ...wanted], 1_800_000, env);
    if (pip.code !== 0) {
      const pkg = pipFailedPackage(pip.stderr) ?? wanted.join(", ");
      throw new LmrError({
        code: "env/pip-install-failed",
        message: `pip could not install ${pkg} into the environment for ${base.path}: ${pip.stderr.trim().split("\n").slice(-3).join(" ")}`,
        hint: "check the requirement's name and version, and that the package index is reachable",
      });
    }
    await fixShebangs(join(tmp, "bin"), tmp, final);
    await writeJsonAtomic(join(tmp, MARKER), {
      python: join(final, "bin", "python"),
      base: base.path,
      version: base.version,
      requirements,
      created_at: new Date().toISOString(),
    });
    try {
      await rename(tmp, final);
    } catch (err) {
      // Someone else finished the same env first: use theirs if it is sound.
      const theirs = await readMarker(final);
      if (theirs) {
        await rm(tmp, { recursive: true, force: true });
        return theirs;
      }
      throw err;
    }
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  const made = await readMarker(final);
  if (!made) throw new LmrError({ code: "env/venv-broken", message: `the new environment at ${final} does not run`, file: final });
  return made;
}

/**
 * The interpreter a run uses. --python is used as is, requirements or not;
 * otherwise requirements get a cached virtualenv (--system-site-packages) on
 * top of the base (LMR_PYTHON, else python3), keyed by the base
 * interpreter and the sorted requirements, rebuilt when its marker is missing
 * or its python no longer runs. No requirements: the base interpreter itself.
 */
export async function resolvePython(opts: ResolvePythonOptions = {}): Promise<PythonEnv> {
  const explicit = opts.python;
  const chosen = explicit ?? opts.base ?? process.env.LMR_PYTHON ?? "python3";
  const base = await requireInterpreter(chosen);
  const reqs = (opts.requirements ?? []).map((r) => r.trim()).filter(Boolean);
  if (explicit || reqs.length === 0) return requirePytest(base, `the interpreter "${chosen}"`);
  const cacheRoot = opts.cacheDir ?? process.env.LMR_CACHE ?? join(homedir(), ".cache", "lmr");
  const key = envKey(base, reqs);
  const dir = join(cacheRoot, "envs", key);
  const cached = await readMarker(dir);
  if (cached) return cached;
  await rm(dir, { recursive: true, force: true });
  return buildEnv(base, reqs, cacheRoot, key);
}
