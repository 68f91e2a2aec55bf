import type { Command } from "commander";
import { sweepTrustedScratch } from "../../runner/trusted-scratch.js";
import { EXIT, LmrError } from "../../core/errors.js";
import { displayPath } from "../../manifest/read.js";
import { DEFAULT_MAX_CALLS, DEFAULT_RECORD_TIMEOUT_S, recordCalls, type DriverSpec } from "../../record/record.js";
import { loadTaskForRecording } from "../../record/load.js";
import { formatLowPrecisionWarning } from "../../record/low-precision.js";
import { action } from "../action.js";
import { paint, printJsonOk, progress, progressDone } from "../output.js";
import { runRecordCheck } from "./record-check.js";
import { parseSandboxChoice } from "../../runner/backends.js";

/** Fixtures travel with every task copy and grading run; beyond this they deserve a second look. */
const LARGE_FIXTURES = 5 * 1024 * 1024;

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

interface RecordFlags {
  driver?: string;
  driverFile?: string;
  maxCalls?: string;
  python?: string;
  mirror?: string;
  seed?: string;
  timeout?: string;
  check?: boolean;
  sandbox: string;
  json?: boolean;
}

export function registerRecord(program: Command): void {
  program
    .command("record")
    .description("run a driver against the reference and record every call of the targets (fixtures/calls.json), and run the fixture generators")
    .argument("<TASK_DIR...>", "the task folder (several with --check)")
    .option("--driver <CODE>", "Python code that calls the targets")
    .option("--driver-file <PY>", "Python file in the task folder that calls the targets (default: record.driver)")
    .option("--max-calls <N>", `calls recorded per target; later ones are only counted (default: record.max_calls, else ${DEFAULT_MAX_CALLS})`)
    .option("--python <PATH>", "Python interpreter; default $LMR_PYTHON, else one with the task's requirements")
    .option("--mirror <DIR>", "local mirror of github.com repositories; default $LMR_MIRROR")
    .option("--seed <N>", "seed for random, numpy.random and torch (default 0)")
    .option("--timeout <S>", `seconds the driver, and each generator, may run (default ${DEFAULT_RECORD_TIMEOUT_S})`)
    .option("--sandbox <MODE>", "none (this machine) | docker (the task's image, built if missing) | auto (docker where built)", "none")
    .option("--check", "regenerate every fixture in a temp folder and compare it byte for byte with the committed one; writes nothing")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
The task is built (workspace + reference) in a temp folder and the driver runs there,
from the workspace root, with every target wrapped: each call's arguments, keyword
arguments, return value or exception, in-place changes to its arguments and, for
methods, the attributes of self (record.self_attrs; default all) before and after.
random, numpy.random and torch are seeded, so the same driver gives byte-identical
files. Arrays and tensors go to fixtures/calls.npz. Values lmr cannot store stop the
recording with the argument's name; list such arguments in the target's
record.skip_args. The grader's conftest.py files (beside the tests.files) run first,
so stand-in modules the tests install are in place while recording too. A target
whose in-place changes are an implementation detail can set
record.check_mutations: false; the replay tests then do not check them.
Tensors keep requires_grad, .grad and being a Parameter; an object met twice in a call
(a Parameter in an optimizer's param_groups and in its state) stays one object; a
target that yields is recorded item by item; calls that draw random numbers keep the
random states they started from.

Fixtures a driver cannot record come from record.generators: committed scripts, run
the same way (seeded, after the conftests, from the tree root), that write exactly
their declared outputs into $LMR_FIXTURES_OUT (e.g. $LMR_FIXTURES_OUT/fixtures/x.json).
Every run must succeed before any file is written into the task.

--check regenerates everything the manifest says how to make (record.driver, with the
seed calls.json was recorded with, and record.generators) and compares it byte for byte
with fixtures/: it names the first difference of each file (for JSON the line and the
JSON pointer, for .npz the member) and files that nothing regenerates.
Next: \`lmr scaffold tests TASK_DIR\` writes replay tests from the recording.
Exit codes: 0 recorded (--check: identical), 1 (--check) a fixture differs,
2 bad task, driver, generator or value, 3 infrastructure.

Examples:
  $ lmr record tasks/pref-loss --driver-file tasks/pref-loss/driver.py
  $ lmr record tasks/pref-loss --driver "from trainers import preference_loss as f; f([-1.0], [-2.0], [-1.5], [-1.5], 0.1)"
  $ lmr record --check tasks/dpo-preference-loss tasks/bertscore-greedy-cos-idf --mirror /work/.mirror`,
    )
    .action(action(runRecord));
}

function wholeNumber(value: string | undefined, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new LmrError({ code: "usage/bad-number", message: `${flag} must be a whole number >= ${min}, got '${value}'`, hint: `e.g. ${flag} 10` });
  }
  return n;
}

async function runRecord(taskDirs: string[], flags: RecordFlags): Promise<number> {
  await sweepTrustedScratch();
  const timeoutS = wholeNumber(flags.timeout, "--timeout", 1);
  const sandbox = parseSandboxChoice(flags.sandbox);
  if (flags.check) {
    for (const [flag, given] of [
      ["--driver", flags.driver],
      ["--driver-file", flags.driverFile],
      ["--max-calls", flags.maxCalls],
      ["--seed", flags.seed],
    ] as const) {
      if (given !== undefined) {
        throw new LmrError({
          code: "usage/check-flag",
          message: `--check regenerates fixtures as task.json says; ${flag} does not apply`,
          hint: "set record.driver (and record.max_calls) in task.json; the seed comes from the committed calls.json",
        });
      }
    }
    return runRecordCheck(taskDirs, {
      sandbox,
      ...(timeoutS !== undefined ? { timeoutS } : {}),
      ...(flags.python ? { python: flags.python } : {}),
      ...(flags.mirror ? { mirror: flags.mirror } : {}),
      json: flags.json === true,
    });
  }
  if (taskDirs.length !== 1) {
    throw new LmrError({
      code: "usage/one-task",
      message: `lmr record records one task at a time, got ${taskDirs.length}`,
      hint: "pass one TASK_DIR, or --check to compare several",
    });
  }
  const taskDir = taskDirs[0]!;
  if (flags.driver !== undefined && flags.driverFile !== undefined) {
    throw new LmrError({
      code: "usage/driver-twice",
      message: "pass --driver or --driver-file, not both",
      hint: "use --driver-file for anything longer than a line",
    });
  }
  const driver: DriverSpec | undefined =
    flags.driver !== undefined ? { code: flags.driver } : flags.driverFile !== undefined ? { file: flags.driverFile } : undefined;
  const maxCalls = wholeNumber(flags.maxCalls, "--max-calls", 1);
  const seed = wholeNumber(flags.seed, "--seed", 0);
  const task = await loadTaskForRecording(taskDir);
  progress(`recording ${task.manifest.id}`);
  const result = await recordCalls(task, {
    ...(driver ? { driver } : {}),
    ...(maxCalls !== undefined ? { maxCalls } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(timeoutS !== undefined ? { timeoutS } : {}),
    ...(flags.python ? { python: flags.python } : {}),
    ...(flags.mirror ? { mirror: flags.mirror } : {}),
    sandbox,
  }).finally(progressDone);
  if (flags.json) {
    printJsonOk("record", result);
    return EXIT.ok;
  }
  const where = displayPath(task.dir);
  for (const t of result.targets) {
    const more = t.calls_seen > t.calls_recorded ? ` (${t.calls_seen} made; raise --max-calls to keep more)` : "";
    const line = `  ${t.symbol} (${t.file}, ${t.kind}): ${t.calls_recorded} call${t.calls_recorded === 1 ? "" : "s"} recorded${more}`;
    process.stdout.write((t.calls_recorded === 0 ? paint("yellow", `${line}: the driver never called it`) : line) + "\n");
  }
  for (const g of result.generators) {
    process.stdout.write(`  ${g.script}: ${g.outputs.join(", ")} in ${g.duration_s.toFixed(1)} s\n`);
  }
  if (result.stale) process.stderr.write(`lmr: ${where}/${result.stale} is from an earlier recording; \`lmr scaffold tests\` drops it from the manifest\n`);
  const files = result.files.map((f, i) => `${where}/${f} (${formatBytes(result.bytes[i]!)})`).join(", ");
  process.stdout.write(`recorded ${result.task_id} → ${files} with python ${result.python.version} in ${result.duration_s.toFixed(1)} s\n`);
  const low = formatLowPrecisionWarning(result.low_precision);
  if (low !== undefined) process.stderr.write(paint("yellow", `warning: ${low}`, process.stderr) + "\n");
  const total = result.bytes.reduce((a, b) => a + b, 0);
  if (total > LARGE_FIXTURES) {
    process.stderr.write(
      paint(
        "yellow",
        `warning: the recording is ${formatBytes(total)}; fixtures should stay small: lower --max-calls or use smaller inputs in the driver`,
        process.stderr,
      ) + "\n",
    );
  }
  return EXIT.ok;
}
