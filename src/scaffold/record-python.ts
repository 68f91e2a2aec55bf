import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { toolkitPath } from "../core/paths.js";
import { buildChildEnv } from "../runner/limits.js";

/** What one run of python/lmr_record did. */
export interface HarnessRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** Last part of stdout and stderr together (the driver's prints, tracebacks of ours). */
  output: string;
  duration_s: number;
}

const OUTPUT_TAIL = 8000;

/**
 * Runs `python -m lmr_record CONFIG` in `tree` as a plain subprocess: the
 * reference and the driver are the task author's own code, run on the author's
 * machine, and nothing here decides a verdict, so the grading sandbox adds
 * nothing but cost. What matters is reproducibility, hence an environment built
 * from nothing (like the runner's), PYTHONHASHSEED=0 and one thread per BLAS pool.
 * The process group is killed when `timeoutS` passes.
 */
export async function runRecordHarness(python: string, tree: string, configPath: string, scratch: string, timeoutS: number): Promise<HarnessRun> {
  const home = join(scratch, "home");
  const tmp = join(scratch, "tmp");
  await mkdir(home, { recursive: true });
  await mkdir(tmp, { recursive: true });
  const env = {
    ...buildChildEnv({ pythonPath: python, home, tmp, threads: 1, network: false }),
    PYTHONPATH: toolkitPath("python"),
    PYTHONHASHSEED: "0",
  };
  const t0 = performance.now();
  return new Promise((resolveRun) => {
    let output = "";
    let timedOut = false;
    const keep = (d: Buffer): void => {
      output = (output + d.toString()).slice(-OUTPUT_TAIL);
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
