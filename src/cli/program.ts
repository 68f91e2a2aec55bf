import { Command } from "commander";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { version } = require("../../package.json") as { version: string };

type Register = (program: Command) => void;

/**
 * Every command, in the order help lists them, with the module that defines it.
 * A run of one command imports only that command's module: the others bring
 * ajv, openai, bullmq and the rest, ~0.5 s of module loading on every call.
 */
export const COMMANDS: readonly (readonly [name: string, load: () => Promise<Register>])[] = [
  ["new", async () => (await import("./commands/new.js")).registerNew],
  ["validate", async () => (await import("./commands/validate.js")).registerValidate],
  ["mask", async () => (await import("./commands/mask.js")).registerMask],
  ["prepare", async () => (await import("./commands/prepare.js")).registerPrepare],
  ["build", async () => (await import("./commands/build.js")).registerBuild],
  ["record", async () => (await import("./commands/record.js")).registerRecord],
  ["scaffold", async () => (await import("./commands/scaffold.js")).registerScaffold],
  ["verify", async () => (await import("./commands/verify.js")).registerVerify],
  ["list", async () => (await import("./commands/list.js")).registerList],
  ["eval", async () => (await import("./commands/eval.js")).registerEval],
  ["generate", async () => (await import("./commands/generate.js")).registerGenerate],
  ["agent", async () => (await import("./commands/agent.js")).registerAgent],
  ["judge", async () => (await import("./commands/judge.js")).registerJudge],
  ["worker", async () => (await import("./commands/worker.js")).registerWorker],
  ["env", async () => (await import("./commands/env.js")).registerEnv],
  ["report", async () => (await import("./commands/report.js")).registerReport],
  ["paper", async () => (await import("./commands/paper.js")).registerPaper],
  ["import", async () => (await import("./commands/import.js")).registerImport],
  ["export", async () => (await import("./commands/export.js")).registerExport],
  ["ci", async () => (await import("./commands/ci.js")).registerCi],
];

const VERSION_ONLY = "--version";

/** The first argument that is not an option: the command a run names, if any ("--version" for a bare `lmr --version`). */
export function commandNamed(args: readonly string[]): string | undefined {
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) return VERSION_ONLY;
  return args.find((a) => !a.startsWith("-"));
}

/**
 * The program with every command (`only` unset) or with the one `only` names.
 * Help, --version and an unknown command get every command, so their output lists them all.
 */
export async function createProgram(only?: string): Promise<Command> {
  const program = new Command("lmr")
    .description("Build, curate and run paper-code-reproduction benchmarks")
    .version(version)
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  program.configureOutput({ outputError: (str, write) => write(str) });
  const chosen = only === VERSION_ONLY ? [] : COMMANDS.filter(([name]) => name === only);
  for (const [, load] of chosen.length > 0 || only === VERSION_ONLY ? chosen : COMMANDS) (await load())(program);
  return program;
}
