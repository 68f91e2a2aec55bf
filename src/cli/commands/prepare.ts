import type { Command } from "commander";
import { readFile } from "node:fs/promises";
import { relative, resolve } from "node:path";
import { EXIT, LmrError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs-atomic.js";
import { toPosix } from "../../core/paths.js";
import type { ExtractFunctionStep, LineRef } from "../../manifest/types.js";
import { extractFunction } from "../../prepare/extract-function.js";
import { convertNotebook } from "../../prepare/notebook.js";
import { suggestSignature } from "../../prepare/suggest.js";
import { action } from "../action.js";
import { usage } from "../api-flags.js";
import { printJsonOk } from "../output.js";

interface ExtractOptions {
  within?: string;
  start: string;
  end: string;
  startOccurrence?: string;
  endOccurrence?: string;
  name?: string;
  param?: string[];
  return?: string[];
  asMethod?: boolean;
  mainGuard?: boolean;
  suggest?: boolean;
  root?: string;
  out?: string;
  json?: boolean;
}

interface NotebookOptions {
  cells?: string;
  out?: string;
  json?: boolean;
}

export function registerPrepare(program: Command): void {
  const prepare = program
    .command("prepare")
    .description("try the manifest's prepare steps on one file: extract a block into a function, or turn a notebook into a module");

  prepare
    .command("extract")
    .description("move lines of a function (or of the module) into a new function and call it from there")
    .argument("<FILE>", "Python file to read (not modified unless --out names it)")
    .option("--within <QUALNAME>", "function or method holding the lines (`f`, `Class.method`, `outer.inner`); omit for module level")
    .requiredOption("--start <LINE|ANCHOR>", "first line: a 1-based number, or text the line contains")
    .requiredOption("--end <LINE|ANCHOR>", "last line (inclusive): a number or an anchor")
    .option("--start-occurrence <N>", "use the N-th line containing the --start anchor")
    .option("--end-occurrence <N>", "use the N-th line containing the --end anchor")
    .option("--name <NAME>", "name of the new function (required unless --suggest)")
    .option("--param <NAME...>", "parameter of the new function (repeat, or comma-separate); default: the suggested ones")
    .option("--return <NAME...>", "name the new function returns (repeat, or comma-separate); default: the suggested ones")
    .option("--as-method", "make a method of the same class, called as self.NAME(...)")
    .option("--main-guard", 'then put the file\'s top-level script code under `if __name__ == "__main__":` (default: when importing the file runs code)')
    .option("--no-main-guard", "leave the top-level code as it is")
    .option("--suggest", "only propose params/returns and print a ready-to-paste manifest step")
    .option("--root <DIR>", "upstream tree root, to write the step's `file` relative to it", ".")
    .option("--out <PATH>", "write the transformed file here instead of printing it")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
A --start/--end that is all digits is a line number; anything else is an anchor,
matched as a substring inside --within (anchors survive upstream line shifts).
A script whose top-level code runs when it is imported (argparse, loading a model,
the extracted block itself) gets main_guard: imports and definitions stay, the
rest goes under \`if __name__ == "__main__":\`, so a test can import the function.

Examples:
  $ lmr prepare extract core/mcts.py --within MCTS.search --start "# selection" \\
      --end "path.append(node)" --name select --as-method --suggest
  $ lmr prepare extract main.py --within main --start 40 --end 58 --name probing \\
      --param model --param data --return accs --out /tmp/main.py
  $ lmr prepare extract main.py --start "labels = np.zeros" --end "aucs.append(" \\
      --name probing --suggest`,
    )
    .action(action(runExtract));

  prepare
    .command("notebook")
    .description("turn a notebook's code cells into a Python module (magics and shell lines removed)")
    .argument("<NOTEBOOK>", ".ipynb file (nbformat 4)")
    .option("--cells <LIST>", "0-based indices among code cells, e.g. 0,2,3 (default: all)")
    .option("--out <PATH>", "write the module here instead of printing it")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
Examples:
  $ lmr prepare notebook demo.ipynb --cells 0,2,3
  $ lmr prepare notebook demo.ipynb --out demo_module.py --json`,
    )
    .action(action(runNotebook));
}

async function runExtract(file: string, opts: ExtractOptions): Promise<number> {
  if (!opts.suggest && opts.name === undefined) throw usage("--name", "--name is required (or pass --suggest to only propose a signature)", PREPARE_HELP);
  const source = await readInput(file);
  const start = parseRef(opts.start, opts.startOccurrence, "--start");
  const end = parseRef(opts.end, opts.endOccurrence, "--end");
  const asMethod = opts.asMethod === true;
  const given = opts.param !== undefined || opts.return !== undefined;
  const sig = await located(file, () => suggestSignature(source, opts.within, start, end, { asMethod }));
  const params = opts.param ? splitList(opts.param) : sig.params;
  const returns = opts.return ? splitList(opts.return) : sig.returns;
  const name = opts.name ?? "extracted_block";
  const mainGuard = opts.mainGuard ?? sig.main_guard === true;
  const spec = {
    ...(opts.within !== undefined ? { within: opts.within } : {}),
    start,
    end,
    name,
    params,
    returns,
    ...(asMethod ? { as_method: true } : {}),
    ...(mainGuard ? { main_guard: true } : {}),
  };
  // A suggestion is only useful if it extracts: try it.
  const result = await located(file, () => extractFunction(source, spec));

  if (opts.suggest) {
    const step: ExtractFunctionStep = { kind: "extract-function", file: toPosix(relative(resolve(opts.root ?? "."), resolve(file))), ...spec };
    const onImport = sig.runs_on_import ? { runs_on_import: sig.runs_on_import } : {};
    if (opts.json) printJsonOk("prepare extract", { params, returns, start_line: result.start_line, end_line: result.end_line, ...onImport, step });
    else {
      const guard = sig.runs_on_import
        ? `import:  runs lines ${sig.runs_on_import.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(", ")}${mainGuard ? ' (main_guard puts them under `if __name__ == "__main__":`)' : " (main_guard off)"}\n`
        : "";
      process.stdout.write(
        `lines:   ${result.start_line}-${result.end_line}\nparams:  ${params.join(", ") || "(none)"}\nreturns: ${returns.join(", ") || "(none)"}\ncall:    ${result.call}\n${guard}step:\n${JSON.stringify(step, null, 2)}\n`,
      );
    }
    return EXIT.ok;
  }
  if (!given) process.stderr.write(`lmr: using the suggested signature: ${result.call} (pass --param/--return to choose)\n`);
  if (opts.mainGuard === undefined && mainGuard)
    process.stderr.write(`lmr: importing ${file} runs top-level code: main_guard is on (pass --no-main-guard to leave it)\n`);
  if (opts.out) await writeFileAtomic(opts.out, result.source);
  const summary = {
    file,
    out: opts.out ?? null,
    start_line: result.start_line,
    end_line: result.end_line,
    def_line: result.def_line,
    call: result.call,
    params,
    returns,
    ...(result.guarded ? { main_guard: true, guarded: result.guarded } : {}),
  };
  if (opts.json) printJsonOk("prepare extract", opts.out ? summary : { ...summary, source: result.source });
  else if (opts.out)
    process.stdout.write(`extracted lines ${result.start_line}-${result.end_line} into ${name} (line ${result.def_line} of ${opts.out}): ${result.call}\n`);
  else process.stdout.write(result.source);
  return EXIT.ok;
}

async function runNotebook(notebook: string, opts: NotebookOptions): Promise<number> {
  const json = await readInput(notebook);
  const cells = opts.cells === undefined ? undefined : parseCells(opts.cells);
  const mod = await located(notebook, () => convertNotebook(json, toPosix(notebook), cells));
  if (opts.out) await writeFileAtomic(opts.out, mod.source);
  const summary = { notebook, out: opts.out ?? null, cells: mod.cells, dropped_lines: mod.dropped_lines, dropped_cells: mod.dropped_cells };
  if (opts.json) printJsonOk("prepare notebook", opts.out ? summary : { ...summary, source: mod.source });
  else if (opts.out)
    process.stdout.write(
      `wrote ${opts.out}: code cells ${mod.cells.join(", ")}, ${mod.dropped_lines} IPython line(s) and ${mod.dropped_cells.length} cell(s) dropped\n`,
    );
  else process.stdout.write(mod.source);
  return EXIT.ok;
}

function parseRef(text: string, occurrence: string | undefined, flag: string): LineRef {
  if (/^\d+$/.test(text)) {
    if (occurrence !== undefined) throw usage(`${flag}-occurrence`, `${flag}-occurrence only applies to an anchor, not the line number ${text}`, PREPARE_HELP);
    const line = Number(text);
    if (line < 1) throw usage(flag, `${flag} ${text}: lines are 1-based`, PREPARE_HELP);
    return { line };
  }
  if (text === "") throw usage(flag, `${flag} is empty`, PREPARE_HELP);
  if (occurrence === undefined) return { anchor: text };
  if (!/^[1-9]\d*$/.test(occurrence)) throw usage(`${flag}-occurrence`, `${flag}-occurrence must be a positive integer, got '${occurrence}'`, PREPARE_HELP);
  return { anchor: text, occurrence: Number(occurrence) };
}

function parseCells(text: string): number[] {
  const parts = text.split(",").map((s) => s.trim());
  if (parts.some((p) => !/^\d+$/.test(p)))
    throw usage("--cells", `--cells '${text}': give 0-based code-cell indices separated by commas, e.g. 0,2,3`, PREPARE_HELP);
  return parts.map(Number);
}

function splitList(values: string[]): string[] {
  return values
    .flatMap((v) => v.split(","))
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

async function readInput(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    throw new LmrError({
      code: "prepare/file-unreadable",
      message: `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      file: path,
      hint: "check the path",
    });
  }
}

/** Errors of the pure functions carry step-relative pointers; on the command line the file is what matters. */
async function located<T>(file: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof LmrError) throw new LmrError({ code: err.code, message: err.message, file, hint: err.hint, cause: err });
    throw err;
  }
}

const PREPARE_HELP = "see lmr prepare --help";
