import type { Command } from "commander";
import { EXIT } from "../../core/errors.js";
import { loadTask } from "../../manifest/load.js";
import { displayPath } from "../../manifest/read.js";
import { scaffoldTests } from "../../scaffold/tests.js";
import { registerScaffoldInstruction } from "./scaffold-instruction.js";
import { action } from "../action.js";
import { printJsonOk } from "../output.js";

/** `lmr scaffold <what>`: generators of task files a person then edits. Subcommands register here. */
export function registerScaffold(program: Command): Command {
  const group = program
    .command("scaffold")
    .description("generate task files for a person to edit: replay tests, the instruction")
    .addHelpText("after", "\nExamples:\n  $ lmr scaffold tests tasks/pref-loss\n  $ lmr scaffold instruction tasks/pref-loss");
  registerScaffoldTests(group);
  registerScaffoldInstruction(group);
  return group;
}

interface TestsFlags {
  out?: string;
  force?: boolean;
  target?: string[];
  json?: boolean;
}

export function registerScaffoldTests(group: Command): void {
  group
    .command("tests")
    .description("write pytest replay tests from fixtures/calls.json (made by `lmr record`)")
    .argument("<TASK_DIR>", "the task folder")
    .option("--out <FILE>", "test file, relative to the task folder (default tests/test_<target>_replay.py)")
    .option("--target <SYMBOL...>", "only these recorded targets (name, Class.method, or Class)")
    .option("--force", "overwrite an existing test file")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
One test per recorded call (ids call-000, call-001, ...) makes the recorded call on
the workspace implementation and compares the return value or the exception,
in-place changes of arguments and the recorded self attributes: floats within rel
1e-6 / abs 1e-8, arrays and tensors by shape, dtype and then values, everything else
exactly, with the path of the first difference in the message. The call runs in the
candidate process (lmr_bridge), which gets the recorded inputs and never the answers;
the comparison is made in the test process. The test is short: tolerances, the
recording, one parametrized test per target. task.json's tests.files and
tests.fixtures get the new files (layout kept). The file is yours to edit: change
RTOL/ATOL, add property tests of your own; an existing file is only replaced with
--force.
Exit codes: 0 written, 2 no recording, file exists or bad input.

Examples:
  $ lmr scaffold tests tasks/pref-loss
  $ lmr scaffold tests tasks/trainer --target Trainer.train_step --out tests/test_train_step_replay.py --force`,
    )
    .action(action(runScaffoldTests));
}

async function runScaffoldTests(taskDir: string, flags: TestsFlags): Promise<number> {
  // a test file task.json already names may be the one this writes
  const task = await loadTask(taskDir, { missingTestsAllowed: true });
  const result = await scaffoldTests(task, {
    ...(flags.out !== undefined ? { out: flags.out } : {}),
    ...(flags.force ? { force: true } : {}),
    ...(flags.target ? { targets: flags.target } : {}),
  });
  if (flags.json) {
    printJsonOk("scaffold tests", result);
    return EXIT.ok;
  }
  const where = displayPath(task.dir);
  const n = result.targets.reduce((s, t) => s + t.calls, 0);
  process.stdout.write(`wrote ${where}/${result.test_file} (${n} replayed call${n === 1 ? "" : "s"} of ${result.targets.map((t) => t.symbol).join(", ")})\n`);
  if (result.uncalled.length > 0) process.stderr.write(`lmr: not replayed (never called by the driver): ${result.uncalled.join(", ")}\n`);
  if (result.manifest_updated) process.stdout.write(`updated ${where}/task.json: tests.files, tests.fixtures\n`);
  return EXIT.ok;
}
