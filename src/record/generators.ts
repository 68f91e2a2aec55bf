import { lstat, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join, posix, resolve } from "node:path";
import { LmrError } from "../core/errors.js";
import { isInside, toolkitPath, toPosix } from "../core/paths.js";
import { isTsJsFile } from "../lang/ts-source.js";
import { execa } from "execa";
import { displayPath } from "../manifest/read.js";
import type { ResolvedTask } from "../manifest/types.js";
import type { PythonEnv } from "../runner/types.js";
import { failIfUnsuccessful, runRecordHarness } from "./python.js";

/** A fixture file made in memory, before anything is written to the task. */
export interface ProducedFile {
  /** Relative to the task folder. */
  file: string;
  data: Buffer;
}

/*
 * The generator contract. A record.generators entry is a committed Python script and the
 * fixture files it writes. It runs the way the driver does (python/lmr_record with
 * "mode": "generator"): from the root of the workspace with the reference laid over it,
 * after the grader's conftest.py files, with random, numpy.random and torch seeded, under
 * the same interpreter and environment, and nothing wrapped. LMR_FIXTURES_OUT names an
 * empty folder; the script writes each output there under its path in the manifest
 * (outputs ["fixtures/x.json"] -> $LMR_FIXTURES_OUT/fixtures/x.json; the parent folders
 * exist already). It must write exactly its outputs: a missing one or any other file
 * stops `lmr record` naming the script and the file, before anything is written to the task.
 */

export interface GeneratorSpec {
  index: number;
  script: string;
  outputs: string[];
}

export interface GeneratorEnv {
  /** The prepared tree it runs from. */
  tree: string;
  /** A fresh folder of its own for config, home, tmp and outputs. */
  dir: string;
  python: PythonEnv;
  seed: number;
  timeoutS: number;
  conftests: { path: string; label: string }[];
}

/**
 * A task whose fixtures come only from JavaScript/TypeScript generators needs no Python:
 * they run with the Node that runs lmr (runNodeGenerator), whatever the sandbox.
 */
export function needsNoPython(task: ResolvedTask): boolean {
  const r = task.manifest.record;
  const gens = r?.generators ?? [];
  return r?.driver === undefined && gens.length > 0 && gens.every((g) => isTsJsFile(g.script));
}

/** Runs one generator and returns its outputs, read back and checked against the manifest. */
export async function runGenerator(task: ResolvedTask, gen: GeneratorSpec, env: GeneratorEnv): Promise<ProducedFile[]> {
  const pointer = `/record/generators/${gen.index}`;
  const abs = resolve(task.dir, gen.script);
  if (
    !isInside(task.dir, abs) ||
    !(await stat(abs).then(
      (s) => s.isFile(),
      () => false,
    ))
  ) {
    throw new LmrError({
      code: "record/generator-missing",
      file: displayPath(task.manifestPath),
      pointer: `${pointer}/script`,
      message: `generator script '${gen.script}' does not exist in the task folder`,
      hint: "commit the script in the task folder, or fix the path (it is relative to the task folder)",
    });
  }
  const outDir = join(env.dir, "fixtures-out");
  const control = join(env.dir, "control");
  await mkdir(control, { recursive: true });
  for (const o of gen.outputs) await mkdir(join(outDir, posix.dirname(o)), { recursive: true });
  if (isTsJsFile(abs)) {
    await runNodeGenerator(gen, abs, env, outDir);
    return collectOutputs(gen, outDir, pointer);
  }
  const config = {
    mode: "generator",
    tree: env.tree,
    out: control,
    task: task.manifest.id,
    seed: env.seed,
    script: abs,
    script_label: gen.script,
    conftests: env.conftests,
  };
  const configPath = join(env.dir, "config.json");
  await writeFile(configPath, JSON.stringify(config));
  const run = await runRecordHarness(env.python, env.tree, configPath, env.dir, env.timeoutS, { LMR_FIXTURES_OUT: outDir }, task.dir);
  await failIfUnsuccessful(run, control, {
    file: gen.script,
    onDriver: gen.script,
    manifest: displayPath(task.manifestPath),
    what: `the generator ${gen.script}`,
    timeoutS: env.timeoutS,
    python: env.python,
  });
  return collectOutputs(gen, outDir, pointer);
}

/**
 * A JavaScript or TypeScript generator (tasks graded by node:test): run with the Node that
 * runs lmr, from the tree with the reference in place, TypeScript imports transpiled by the
 * Node harness's loader hooks, LMR_FIXTURES_OUT set as for a Python generator.
 */
async function runNodeGenerator(gen: GeneratorSpec, abs: string, env: GeneratorEnv, outDir: string): Promise<void> {
  const home = join(env.dir, "home");
  await mkdir(home, { recursive: true });
  const r = await execa(process.execPath, ["--import", toolkitPath("node", "lmr-harness", "ts-register.mjs"), abs], {
    cwd: env.tree,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", LMR_FIXTURES_OUT: outDir, LMR_SEED: String(env.seed) },
    extendEnv: false,
    reject: false,
    timeout: env.timeoutS * 1000,
    stdin: "ignore",
  });
  if (r.timedOut) {
    throw new LmrError({
      code: "record/generator-failed",
      file: gen.script,
      message: `${gen.script} ran past ${env.timeoutS} s`,
      hint: "make the generator faster, or raise --timeout",
    });
  }
  if (r.exitCode !== 0) {
    const tail = String(r.stderr ?? "")
      .trim()
      .split("\n")
      .slice(-8)
      .join("\n");
    throw new LmrError({
      code: "record/generator-failed",
      file: gen.script,
      message: `${gen.script} exited with ${r.exitCode ?? r.signal}${tail ? `:\n${tail}` : ""}`,
      hint: "run it by hand from the workspace with the reference in place: node --import <lmr>/node/lmr-harness/ts-register.mjs SCRIPT",
    });
  }
}

/** The generator's outputs, read back and checked against its declared outputs. */
async function collectOutputs(gen: GeneratorSpec, outDir: string, pointer: string): Promise<ProducedFile[]> {
  const written = await listWritten(outDir, gen.script);
  const declared = new Set(gen.outputs);
  const extra = written.filter((f) => !declared.has(f));
  if (extra.length > 0) {
    throw new LmrError({
      code: "record/generator-output-extra",
      file: gen.script,
      pointer: `${pointer}/outputs`,
      message: `${gen.script} wrote ${extra.join(", ")}, which ${extra.length === 1 ? "is not one of its outputs" : "are not among its outputs"} in task.json`,
      hint: `add ${extra.map((f) => JSON.stringify(f)).join(", ")} to ${pointer}/outputs, or stop writing ${extra.length === 1 ? "it" : "them"}`,
    });
  }
  const files: ProducedFile[] = [];
  for (const [j, o] of gen.outputs.entries()) {
    if (!written.includes(o)) {
      throw new LmrError({
        code: "record/generator-output-missing",
        file: gen.script,
        pointer: `${pointer}/outputs/${j}`,
        message: `${gen.script} did not write ${o} (it runs with LMR_FIXTURES_OUT set and writes $LMR_FIXTURES_OUT/${o})`,
        hint: `make ${gen.script} write every declared output, or remove "${o}" from ${pointer}/outputs`,
      });
    }
    files.push({ file: o, data: await readFile(join(outDir, o)) });
  }
  return files;
}

/** Files under the output folder, relative to it; links are refused (a fixture is a real file). */
async function listWritten(root: string, script: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const rel = toPosix(path.slice(root.length + 1));
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) out.push(rel);
      else {
        throw new LmrError({
          code: "record/generator-output-link",
          file: script,
          message: `${script} wrote ${rel} as a ${(await lstat(path)).isSymbolicLink() ? "symbolic link" : "special file"}`,
          hint: "write the fixture's bytes into the file itself",
        });
      }
    }
  };
  await walk(root);
  return out.sort();
}

/**
 * The grader's set-up that runs where the code is imported, in order: the candidate's set-up
 * (tests.candidate.setup: stand-ins for modules the upstream imports; the candidate runs it
 * before the workspace is imported), then the conftest.py files in the folders of tests.files
 * (sorted by path), which the tests' own process runs. A recording or a generator imports the
 * reference as the candidate does, so it needs the same stand-ins. A set-up that imports
 * helper files of its own puts their folder on sys.path itself (it runs from the task folder).
 */
export async function findConftests(task: ResolvedTask): Promise<{ path: string; label: string; pointer: string }[]> {
  const setup = task.manifest.tests.candidate?.setup;
  const folders = new Set(task.manifest.tests.files.map((f) => posix.dirname(toPosix(f))));
  const found: string[] = [];
  for (const folder of folders) {
    const rel = posix.join(folder, "conftest.py");
    if ((await stat(join(task.dir, rel)).catch(() => undefined))?.isFile()) found.push(rel);
  }
  const out = found.sort().map((rel) => ({ path: join(task.dir, rel), label: rel, pointer: "/tests/files" }));
  return setup ? [{ path: join(task.dir, setup), label: setup, pointer: "/tests/candidate/setup" }, ...out] : out;
}
