import { DRIVER_FILE, INSTRUCTION_FILE } from "../scaffold/task-skeleton.js";
import type { Asker, NextStep } from "./types.js";

/** The steps that take a new task to a verified one. */
export function nextSteps(taskDir: string, testFile: string): NextStep[] {
  const shown = /^[\w./-]+$/.test(taskDir) ? taskDir : `'${taskDir.replace(/'/g, "'\\''")}'`;
  const cmd = (args: string[], why: string): NextStep => ({ lmr: args, text: `lmr ${args.map((a) => (a === taskDir ? shown : a)).join(" ")}`, why });
  return [
    { text: `edit ${shown}/${DRIVER_FILE}`, why: "make it call the target on inputs that cover the paper's cases" },
    cmd(["record", taskDir], "run the driver against the reference; the calls go to fixtures/calls.json"),
    cmd(["scaffold", "tests", taskDir], `replace the placeholder ${testFile} with replay tests; then add checks of your own`),
    { text: `edit ${shown}/${INSTRUCTION_FILE}`, why: "resolve every TODO(author)" },
    cmd(["verify", taskDir], "reference passes, stub fails in a test, mutants are killed, nothing leaks"),
  ];
}

/** Steps as numbered lines: the command or action, and why under it. */
export function formatNextSteps(steps: readonly NextStep[]): string {
  return steps.map((s, i) => `  ${i + 1}. ${s.text}\n     ${s.why}`).join("\n");
}

/**
 * At a terminal: walks through the steps. A step to do by hand is shown; an
 * lmr command runs (through `run`, which returns its exit code) after a yes.
 * A no, or a command that fails, prints the steps that are left and stops.
 * Returns how many steps were done.
 */
export async function walkNextSteps(
  ask: Asker,
  steps: readonly NextStep[],
  run: (args: string[]) => Promise<number>,
  print: (text: string) => void,
): Promise<number> {
  for (const [i, step] of steps.entries()) {
    const left = (): number => {
      print(`Next steps:\n${formatNextSteps(steps.slice(i))}\n`);
      return i;
    };
    if (!step.lmr) {
      print(`Now ${step.text}: ${step.why}.\n`);
      continue;
    }
    if (!(await ask.confirm({ message: `Run \`${step.text}\` now?`, default: true }))) return left();
    const code = await run(step.lmr);
    if (code !== 0) {
      print(`\`${step.text}\` exited with ${code}.\n`);
      return left();
    }
  }
  return steps.length;
}
