import type { Command } from "commander";
import { readFile } from "node:fs/promises";
import { EXIT, LmrError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs-atomic.js";
import type { LineRef, MaskMode } from "../../manifest/types.js";
import { checkCompiles, formatCompileError } from "../../mask/check-compile.js";
import { maskerFor } from "../../mask/registry.js";
import { TsMasker } from "../../mask/ts/masker.js";
import { finishTypeCheck, formatTypeProblem, openTypeCheck } from "../../mask/ts/typecheck.js";
import { createTsTypeOracle } from "../../mask/ts/types.js";
import type { MaskSpec, Masker, SymbolInfo } from "../../mask/types.js";
import { action } from "../action.js";
import { usage } from "../api-flags.js";
import { printJsonFailed, printJsonOk } from "../output.js";

interface MaskOptions {
  symbol: string[];
  mode?: string;
  line?: string;
  region?: string;
  out?: string;
  list?: boolean;
  json?: boolean;
  compileCheck: boolean;
}

const MODES: readonly MaskMode[] = ["body", "region", "class"];

export function registerMask(program: Command): void {
  program
    .command("mask")
    .description(
      'mask functions, methods or classes of a source file: the body becomes a TODO comment and `raise NotImplementedError` (Python) or `throw new Error("not implemented: NAME")` (TS/JS)',
    )
    .argument("<FILE>", "source file: .py, or .ts/.tsx/.mts/.cts/.js/.mjs/.cjs/.jsx")
    .option("-s, --symbol <NAME>", "qualified name to mask: `fn`, `Class.method`, `Class`, `outer.inner` (repeatable)", collect, [])
    .option("-m, --mode <MODE>", "body | region | class (default: class for a class, region with --region, else body)")
    .option("--line <N>", "line of the `def`/`class` (or of its first decorator) when the name is defined more than once")
    .option(
      "--region <START:END>",
      "mode region: first and last line to mask, 1-based and inclusive; a side that is not a number is an anchor (text of the line)",
    )
    .option("-o, --out <PATH>", "write the masked source here (atomically) instead of printing it")
    .option("--list", "list the file's functions, methods and classes instead of masking")
    .option("--json", "print JSON: {file, targets} as the envelope's data (the source is written only with --out)")
    .option("--no-compile-check", "do not compile() a Python result (LMR_PYTHON or python3), nor type-check a TS/JS one against the nearest tsconfig.json")
    .addHelpText(
      "after",
      `
Decorators, the signature and the docstring stay; so does everything outside
the masked spans, byte for byte (line endings and indentation included).
The result is re-parsed and compiled with Python; a failure exits with 1.
A TS/JS result must parse with no syntax error, and where a tsconfig.json sits
above the file, \`tsc --noEmit\` over that project must report no new error.
There, a .ts stub for a function with no declared return type ends with
\`return undefined as unknown as T\` (T: the type the checker inferred from the
body), so callers infer what they did; without a project (or with
--no-compile-check) it returns \`any\`.

Examples:
  $ lmr mask model.py --symbol Attention.forward
  $ lmr mask model.py -s loss_fn -s Trainer.step --out /tmp/model.py
  $ lmr mask model.py --symbol Box.size --line 42        # getter/setter pair
  $ lmr mask train.py --symbol train --region 57:63      # or --region "for batch:opt.step()"
  $ lmr mask model.py --symbol Tokenizer --mode class --json
  $ lmr mask model.py --list
  $ lmr mask src/decode.ts --symbol BeamSearch.step --json
  $ lmr mask lib/bpe.mjs --symbol mergeStep`,
    )
    .action(action(runMask));
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function runMask(file: string, opts: MaskOptions): Promise<number> {
  const masker = maskerFor(file);
  const source = await readSource(file);
  if (opts.list) return printSymbols(file, await masker.listSymbols(source), opts.json === true);
  if (opts.symbol.length === 0) throw usage("--symbol", "give --symbol NAME (repeatable), or --list to see the file's symbols", MASK_HELP);
  const specs = await buildSpecs(masker, source, opts);
  // TS/JS with a tsconfig above: the project is loaded once, for the stubs' types and then the check
  const project = opts.compileCheck && masker instanceof TsMasker ? await openTypeCheck(file) : undefined;
  const result =
    masker instanceof TsMasker && project
      ? await masker.mask(source, specs, file, { types: createTsTypeOracle(project.morph, project.project, project.file) })
      : await masker.mask(source, specs, file);
  const targets = result.targets.map((t) => ({ symbol: t.symbol, mode: t.mode, start_line: t.start_line, end_line: t.end_line }));

  if (opts.compileCheck && masker.language !== "python") {
    const typed = project && finishTypeCheck(project, result.source);
    if (typed && typed.added.length > 0) {
      const message = `the masked source adds ${typed.added.length} type error(s) under ${typed.tsconfig}: ${typed.added.slice(0, 3).map(formatTypeProblem).join("; ")}`;
      if (opts.json) printJsonFailed("mask", new LmrError({ code: "mask/type-errors", file, message }), { file, targets, added: typed.added });
      else process.stderr.write(`lmr: ${file}: ${message}\n`);
      return EXIT.check;
    }
  } else if (opts.compileCheck) {
    const [outcome] = await checkCompiles([{ name: file, source: result.source }]);
    if (outcome && !outcome.ok) {
      const message = `the masked source does not compile: ${formatCompileError(outcome)}`;
      if (opts.json) printJsonFailed("mask", new LmrError({ code: "mask/compile-failed", file, message }), { file, targets, compile_error: outcome.error });
      else process.stderr.write(`lmr: ${file}: ${message}\n`);
      return EXIT.check;
    }
  }
  if (opts.out) await writeFileAtomic(opts.out, result.source);
  if (opts.json) printJsonOk("mask", { file, targets, ...(opts.out ? { out: opts.out } : {}) });
  else if (!opts.out) process.stdout.write(result.source);
  else process.stderr.write(`masked ${targets.map((t) => t.symbol).join(", ")} → ${opts.out}\n`);
  return EXIT.ok;
}

async function readSource(file: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LmrError({ code: "mask/read-failed", file, message: code === "ENOENT" ? "no such file" : `cannot read: ${String(err)}`, hint: "check the path" });
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new LmrError({ code: "mask/not-utf8", file, message: "the file is not valid UTF-8", hint: "convert it to UTF-8 first" });
  }
}

async function buildSpecs(masker: Masker, source: string, opts: MaskOptions): Promise<MaskSpec[]> {
  if (opts.mode !== undefined && !MODES.includes(opts.mode as MaskMode))
    throw usage("--mode", `unknown --mode "${opts.mode}"; use body, region or class`, MASK_HELP);
  if (opts.line !== undefined && opts.symbol.length > 1) throw usage("--line", "--line applies to one symbol; mask the others in a separate call", MASK_HELP);
  if (opts.region !== undefined && opts.symbol.length > 1) throw usage("--region", "--region applies to one symbol", MASK_HELP);
  if (opts.region !== undefined && opts.mode !== undefined && opts.mode !== "region")
    throw usage("--region", `--region needs --mode region, not ${opts.mode}`, MASK_HELP);
  const line = opts.line === undefined ? undefined : parsePositive(opts.line, "--line");
  const region = opts.region === undefined ? undefined : parseRegion(opts.region);
  const kinds = opts.mode === undefined && region === undefined ? await masker.listSymbols(source) : [];
  return opts.symbol.map((symbol) => {
    const mode = (opts.mode as MaskMode | undefined) ?? (region ? "region" : kinds.some((k) => k.name === symbol && k.kind === "class") ? "class" : "body");
    const spec: MaskSpec = { symbol, mode };
    if (line !== undefined) spec.line = line;
    if (region) spec.region = region;
    return spec;
  });
}

function parseRegion(text: string): { start: LineRef; end: LineRef } {
  const parts = text.split(":");
  if (parts.length !== 2 || parts[0] === "" || parts[1] === "") throw usage("--region", `--region "${text}" is not START:END (e.g. 12:20)`, MASK_HELP);
  const ref = (p: string): LineRef => (/^\d+$/.test(p) ? { line: parsePositive(p, "--region") } : { anchor: p });
  return { start: ref(parts[0]!), end: ref(parts[1]!) };
}

function parsePositive(text: string, flag: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1) throw usage(flag, `${flag} must be a positive line number, got "${text}"`, MASK_HELP);
  return n;
}

const MASK_HELP = "run `lmr mask --help`";

function printSymbols(file: string, symbols: SymbolInfo[], json: boolean): number {
  if (json) {
    printJsonOk("mask", { file, symbols });
    return EXIT.ok;
  }
  const rows = symbols.map((s) => [String(s.line), s.kind, s.name, s.signature.replace(/\s*\r?\n\s*/g, " ")]);
  const width = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length), ["LINE", "KIND", "NAME"][i]!.length));
  const format = (r: string[]): string => `${r[0]!.padStart(width[0]!)}  ${r[1]!.padEnd(width[1]!)}  ${r[2]!.padEnd(width[2]!)}  ${r[3]}`;
  process.stdout.write([format(["LINE", "KIND", "NAME", "SIGNATURE"]), ...rows.map(format)].join("\n") + "\n");
  return EXIT.ok;
}
