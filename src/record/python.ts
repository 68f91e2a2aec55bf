import { spawn } from "node:child_process";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import { isErrorCode } from "../core/error-codes.js";
import { toolkitPath } from "../core/paths.js";
import { buildChildEnv } from "../runner/limits.js";
import { runRecordInImage } from "../runner/docker/exec.js";
import { PROCESS_OUTPUT_TAIL, type ProcessRun, type PythonEnv } from "../runner/types.js";

/**
 * Runs `python -m lmr_record CONFIG` in `tree` as a plain subprocess: the
 * reference and the driver are the task author's own code, run on the author's
 * machine, and nothing here decides a verdict, so the grading sandbox adds
 * nothing but cost. What matters is reproducibility, hence an environment built
 * from nothing (like the runner's), PYTHONHASHSEED=0 and one thread per BLAS pool.
 * The process group is killed when `timeoutS` passes. `extraEnv` adds variables
 * (LMR_FIXTURES_OUT for a fixture generator). An interpreter of a task image
 * (--sandbox docker) runs it there instead, with the same inputs and outputs.
 */
export async function runRecordHarness(
  interpreter: string | PythonEnv,
  tree: string,
  configPath: string,
  scratch: string,
  timeoutS: number,
  extraEnv: Record<string, string> = {},
  taskDir?: string,
): Promise<ProcessRun> {
  // in an image only bound folders exist: the task folder goes in whole (read-only), as the host shows it to a plain subprocess
  if (typeof interpreter !== "string" && interpreter.image) return runRecordInImage(interpreter, tree, configPath, scratch, timeoutS, extraEnv, taskDir);
  const python = typeof interpreter === "string" ? interpreter : interpreter.path;
  const home = join(scratch, "home");
  const tmp = join(scratch, "tmp");
  await mkdir(home, { recursive: true });
  await mkdir(tmp, { recursive: true });
  const env = {
    ...buildChildEnv({ pythonPath: python, home, tmp, threads: 1, network: false }),
    PYTHONPATH: toolkitPath("python"),
    PYTHONHASHSEED: "0",
    ...extraEnv,
  };
  const t0 = performance.now();
  return new Promise((resolveRun) => {
    let output = "";
    let timedOut = false;
    const keep = (d: Buffer): void => {
      output = (output + d.toString()).slice(-PROCESS_OUTPUT_TAIL);
    };
    const child = spawn(python, ["-B", "-m", "lmr_record", configPath], { cwd: tree, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutS * 1000);
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (err) => {
      clearTimeout(timer);
      resolveRun({ exitCode: null, signal: null, timedOut, output: `cannot start ${python}: ${err.message}`, duration_s: (performance.now() - t0) / 1000 });
    });
    // Whatever the driver left running (holding the pipes open) goes with the run.
    child.on("exit", killGroup);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolveRun({ exitCode: code, signal, timedOut, output, duration_s: (performance.now() - t0) / 1000 });
    });
  });
}

export interface FailureContext {
  /** The file a timeout is reported on. */
  file: string;
  /** The file a failure of the driver's (or generator's) own code is reported on. */
  onDriver: string;
  /** The manifest, for everything else the harness reports. */
  manifest: string;
  /** "the driver" or "the generator generators/x.py", for messages. */
  what: string;
  timeoutS: number;
  python: PythonEnv;
}

/** Turns what the harness reported into an LmrError: its error.json, a timeout, or a crash of ours. */
export async function failIfUnsuccessful(run: ProcessRun, out: string, ctx: FailureContext): Promise<void> {
  if (run.timedOut) {
    throw new LmrError({
      code: "record/timeout",
      file: ctx.file,
      message: `${ctx.what} ran longer than ${ctx.timeoutS} s and was stopped`,
      hint: `make ${ctx.what} smaller (fewer or shorter calls) or pass --timeout`,
    });
  }
  const reported = await readFile(join(out, "error.json"), "utf8").then(
    (t) => JSON.parse(t) as { code: string; message: string; hint: string; pointer: string },
    () => undefined,
  );
  if (reported) {
    const onScript = reported.code === "record/driver-failed" || reported.code === "record/generator-failed";
    throw new LmrError({
      // the harness's codes are in ERROR_CODES; one it invents is a bug of lmr's: report it as a crash, code kept in the message
      code: isErrorCode(reported.code) ? reported.code : "record/crashed",
      file: onScript ? ctx.onDriver : ctx.manifest,
      ...(reported.pointer ? { pointer: reported.pointer } : {}),
      message: isErrorCode(reported.code) ? reported.message : `${reported.code}: ${reported.message}`,
      ...(reported.hint ? { hint: reported.hint } : {}),
    });
  }
  if (run.exitCode !== 0) {
    throw new LmrError({
      code: "record/crashed",
      message: `the recording harness failed (${run.signal ?? `exit ${run.exitCode}`}) under ${ctx.python.path}:\n${run.output.trim()}`,
      hint: "a bug in lmr or an interpreter that cannot run it; re-run with --python pointing at CPython 3.9+",
    });
  }
}
