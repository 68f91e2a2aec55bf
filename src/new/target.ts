import { isLmrError } from "../core/errors.js";
import type { LineRef, MaskMode, Target } from "../manifest/types.js";
import { maskerFor } from "../mask/registry.js";
import type { SymbolInfo } from "../mask/types.js";
import { answer, messageOf, validatorOf } from "./answers.js";
import { MODES, parseLine, parseLineRef, parseMode, rankNearMatches, usageError } from "./choices.js";
import type { Choice, NewEnv, NewFlags } from "./types.js";
import type { UpstreamView } from "./upstream.js";

/** The target file: one of the upstream's source files. */
export async function chooseFile(view: UpstreamView, flag: string | undefined, env: NewEnv): Promise<string> {
  const where = view.input.kind === "url" ? view.input.url : view.input.raw;
  if (view.sourceFiles.length === 0)
    throw usageError(
      "--repo",
      `${where} has no Python (.py) files${view.commit ? ` at ${view.commit}` : ""}`,
      "a notebook needs a prepare step first: see `lmr prepare notebook --help`",
    );
  const parse = (raw: string): string => {
    const file = raw
      .trim()
      .replace(/\\/g, "/")
      .replace(/^(\.\/)+/, "");
    if (view.sourceFiles.includes(file)) return file;
    const near = rankNearMatches(file, view.sourceFiles);
    throw usageError(
      "--file",
      `'${raw}' is not a Python file of ${where}`,
      `near matches: ${near.join(", ")}${view.sourceFiles.length > near.length ? ` (${view.sourceFiles.length} files in all)` : ""}`,
    );
  };
  return answer(
    {
      flag: "--file",
      value: flag,
      parse,
      prompt: (a) => a.search({ message: "Target file (type to filter)", choices: view.sourceFiles.map((f) => ({ name: f, value: f })) }),
    },
    env,
  );
}

export interface ChosenTarget {
  target: Target;
  info: SymbolInfo;
  symbols: SymbolInfo[];
}

/** Symbol, its definition line when it has several, mask mode and region; checked by masking it. */
export async function chooseTarget(file: string, source: string, flags: NewFlags, env: NewEnv): Promise<ChosenTarget> {
  const symbols = await maskerFor(file).listSymbols(source);
  if (symbols.length === 0) throw usageError("--file", `${file} defines no function, method or class`, "choose another file");
  for (;;) {
    try {
      return await chooseOnce(file, source, symbols, flags, env);
    } catch (err) {
      // at a terminal, a target that cannot be masked sends the person back to the symbol list
      if (!env.ask || flags.symbol !== undefined || !isLmrError(err) || err.kind !== "usage") throw err;
      env.note?.(messageOf(err));
    }
  }
}

async function chooseOnce(file: string, source: string, symbols: SymbolInfo[], flags: NewFlags, env: NewEnv): Promise<ChosenTarget> {
  const info = await chooseSymbol(file, symbols, flags, env);
  const duplicated = symbols.filter((s) => s.name === info.name).length > 1;
  const fallbackMode: MaskMode = info.kind === "class" ? "class" : "body";
  const mode = await answer(
    {
      flag: "--mode",
      value: flags.mode,
      parse: (r) => checkModeFits(parseMode(r), info),
      prompt: (a) => a.select({ message: "Mask mode", default: fallbackMode, choices: modeChoices(info) }),
      fallback: () => fallbackMode,
    },
    env,
  );
  const target: Target = { file, symbol: info.name, mode, ...(duplicated ? { line: info.line } : {}) };
  if (mode === "region") target.region = await chooseRegion(file, source, target, info, flags, env);
  await checkMasks(file, source, target, flags.regionStart !== undefined ? "--region-start" : "--symbol");
  return { target, info, symbols };
}

async function chooseSymbol(file: string, symbols: SymbolInfo[], flags: NewFlags, env: NewEnv): Promise<SymbolInfo> {
  const names = [...new Set(symbols.map((s) => s.name))];
  const parse = (raw: string): SymbolInfo => {
    const name = raw.trim();
    const found = symbols.filter((s) => s.name === name);
    if (found.length === 0) throw usageError("--symbol", `'${raw}' is not defined in ${file}`, `near matches: ${rankNearMatches(name, names).join(", ")}`);
    if (found.length === 1) return found[0]!;
    const lines = found.map((s) => s.line);
    if (flags.line === undefined)
      throw usageError("--line", `'${name}' is defined ${found.length} times in ${file} (lines ${lines.join(", ")})`, `pick one, e.g. --line ${lines[0]}`);
    const line = parseLine(flags.line);
    const hit = found.find((s) => s.line === line || s.decorator_line === line);
    if (!hit) throw usageError("--line", `'${name}' is not defined at line ${line} of ${file}`, `choose one of lines ${lines.join(", ")}`);
    return hit;
  };
  if (flags.symbol !== undefined) return parse(flags.symbol);
  if (!env.ask) return parse(""); // unreachable: the flags were checked up front
  const choices: Choice<SymbolInfo>[] = symbols.map((s) => ({
    name: `${s.name}  (${s.kind}, line ${s.line})`,
    value: s,
    description: s.signature.replace(/\s+/g, " "),
  }));
  return env.ask.search({ message: "Target symbol (type to filter)", choices });
}

function modeChoices(info: SymbolInfo): Choice<MaskMode>[] {
  const describe: Record<MaskMode, string> = {
    body: "the whole body (signature and docstring kept)",
    region: "some lines inside the body",
    class: "every method body of the class",
  };
  return MODES.filter((m) => (info.kind === "class") === (m === "class")).map((m) => ({ name: `${m}: ${describe[m]}`, value: m }));
}

function checkModeFits(mode: MaskMode, info: SymbolInfo): MaskMode {
  if (mode === "class" && info.kind !== "class")
    throw usageError("--mode", `'class' masks a class, and ${info.name} is a ${info.kind}`, "use --mode body or --mode region");
  if (mode !== "class" && info.kind === "class")
    throw usageError("--mode", `'${mode}' masks a function or method, and ${info.name} is a class`, "use --mode class, or name one method (Class.method)");
  return mode;
}

async function chooseRegion(
  file: string,
  source: string,
  target: Target,
  info: SymbolInfo,
  flags: NewFlags,
  env: NewEnv,
): Promise<{ start: LineRef; end: LineRef }> {
  const span = `lines ${info.line}-${info.end_line} of ${file}`;
  const start = await answer(
    {
      flag: "--region-start",
      value: flags.regionStart,
      parse: (r) => parseLineRef("--region-start", r),
      prompt: (a) =>
        a.text({
          message: `First line to mask, inside ${info.name} (${span}): a line number or text the line contains`,
          validate: validatorOf((r) => parseLineRef("--region-start", r)),
        }),
    },
    env,
  );
  const parseEnd = async (r: string): Promise<LineRef> => {
    const end = parseLineRef("--region-end", r);
    await checkMasks(file, source, { ...target, region: { start, end } }, "--region-end");
    return end;
  };
  const end = await answer(
    {
      flag: "--region-end",
      value: flags.regionEnd,
      parse: parseEnd,
      prompt: (a) => a.text({ message: `Last line to mask (${span})`, validate: validatorOf(parseEnd) }),
    },
    env,
  );
  return { start, end };
}

/** The target must mask cleanly: what `lmr build` will do, tried now so a bad answer fails here. */
async function checkMasks(file: string, source: string, target: Target, flag: string): Promise<void> {
  try {
    await maskerFor(file).mask(
      source,
      [
        {
          symbol: target.symbol,
          mode: target.mode,
          ...(target.line !== undefined ? { line: target.line } : {}),
          ...(target.region ? { region: target.region } : {}),
        },
      ],
      file,
    );
  } catch (err) {
    if (isLmrError(err)) throw usageError(flag, `${target.symbol} cannot be masked in mode ${target.mode}: ${messageOf(err)}`);
    throw err;
  }
}
