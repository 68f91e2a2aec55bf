import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { isLmrError } from "../../dist/core/errors.js";
import { formatTodo } from "../../dist/mask/python/body.js";
import { PythonMasker } from "../../dist/mask/python/masker.js";
import { PythonWorker, resolvePython } from "../../dist/mask/python/worker.js";
import type { SymbolInfo } from "../../dist/mask/types.js";

/**
 * The masking sweep: mask every function and method of many files, one at a
 * time (mode body), and check each result three ways:
 *  1. it compiles (Python's own `ast.parse` + `compile`, one process for all);
 *  2. it differs from the input only inside the body span the masker
 *     reports, and that span lies after the header and inside the definition;
 *  3. Python's `ast` sees the same decorators, arguments, return annotation
 *     and docstring as before, and a body of [docstring,] `raise NotImplementedError`.
 * It also checks that tree-sitter found exactly the definitions Python's ast finds.
 */

type SweepCheck = "read" | "parse" | "index" | "mask" | "span" | "compile" | "signature" | "body";

interface SweepFailure {
  file: string;
  symbol?: string;
  line?: number;
  check: SweepCheck;
  message: string;
}

export interface SweepReport {
  python: string;
  files: number;
  /** Functions and methods, as Python's ast counts them. */
  defs: number;
  ok: number;
  failures: SweepFailure[];
  /** Files whose definitions could not be masked at all (not UTF-8, tree-sitter or Python cannot parse them). */
  unparsed: { file: string; reason: string }[];
  seconds: number;
}

export interface SweepOptions {
  python?: string;
  masker?: PythonMasker;
  onFile?: (file: string, done: number, total: number) => void;
}

interface ProbedDef {
  name: string;
  line: number;
  kind: "function" | "class";
  decorators: string[];
  doc: string | null;
  async?: boolean;
  args?: string;
  returns?: string | null;
  body?: string[];
}

interface ProbeAnswer {
  ok: boolean;
  error?: { type: string; message: string; line?: number };
  defs?: ProbedDef[];
}

const RAISE_DUMP = "Raise(exc=Name(id='NotImplementedError', ctx=Load()))";

/** The `.py` files directly in the interpreter's stdlib folder, sorted. */
export async function listStdlibFiles(python?: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(resolvePython(python), ["-I", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"]);
  const dir = stdout.trim();
  const names = (await readdir(dir)).filter((n) => n.endsWith(".py")).sort();
  return names.map((n) => join(dir, n));
}

export async function sweepFiles(files: readonly string[], options: SweepOptions = {}): Promise<SweepReport> {
  const started = performance.now();
  const python = resolvePython(options.python);
  const masker = options.masker ?? new PythonMasker();
  const worker = new PythonWorker(python);
  const report: SweepReport = { python, files: files.length, defs: 0, ok: 0, failures: [], unparsed: [], seconds: 0 };
  const checks: Promise<void>[] = [];
  try {
    for (const [i, file] of files.entries()) {
      await sweepFile(file, masker, worker, report, checks);
      options.onFile?.(file, i + 1, files.length);
    }
    await Promise.all(checks);
  } finally {
    await worker.close();
  }
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

async function sweepFile(file: string, masker: PythonMasker, worker: PythonWorker, report: SweepReport, checks: Promise<void>[]): Promise<void> {
  const bytes = await readFile(file);
  const original = worker.request<ProbeAnswer>({ op: "probe", name: file }, bytes);
  let source: string;
  let symbols: SymbolInfo[];
  try {
    source = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    symbols = await masker.listSymbols(source, file);
  } catch (err) {
    const reason = isLmrError(err) ? err.message : `not UTF-8 (${String(err)})`;
    const probe = await original;
    const count = probe.defs?.filter((d) => d.kind === "function").length ?? 0;
    report.defs += count;
    report.unparsed.push({ file, reason: `${reason}; ${count} def(s) not masked` });
    return;
  }
  const probe = await original;
  if (!probe.ok || !probe.defs) {
    report.unparsed.push({ file, reason: `Python cannot compile the input: ${probe.error?.type}: ${probe.error?.message}` });
    return;
  }
  compareIndexes(file, symbols, probe.defs, report);
  const reference = new Map(probe.defs.map((d) => [`${d.name}@${d.line}`, d]));
  const counts = new Map<string, number>();
  for (const s of symbols) counts.set(s.name, (counts.get(s.name) ?? 0) + 1);

  report.defs += probe.defs.filter((d) => d.kind === "function").length;
  for (const sym of symbols) {
    const before = reference.get(`${sym.name}@${sym.line}`);
    // Definitions only one side finds are already reported by compareIndexes.
    if (sym.kind === "class" || !before) continue;
    const fail = (check: SweepCheck, message: string): void => {
      report.failures.push({ file, symbol: sym.name, line: sym.line, check, message });
    };
    const line = counts.get(sym.name)! > 1 ? sym.line : undefined;
    let masked: string;
    try {
      const result = await masker.mask(source, [line === undefined ? { symbol: sym.name, mode: "body" } : { symbol: sym.name, mode: "body", line }], file);
      masked = result.source;
      const problem = checkSpan(bytes, masked, sym, result.targets[0]?.byte_ranges[0], result.targets[0]?.reference[0]);
      if (problem) {
        fail("span", problem);
        continue;
      }
    } catch (err) {
      fail("mask", isLmrError(err) ? `${err.code}: ${err.message}` : String(err));
      continue;
    }
    const answer = worker.request<ProbeAnswer>({ op: "probe", name: file, targets: [[sym.name, sym.line]], body: true }, masked);
    checks.push(
      answer.then((a) => {
        const problem = checkProbe(a, before);
        if (problem) fail(problem.check, problem.message);
        else report.ok++;
      }),
    );
    await worker.drained();
  }
}

/** Check 2: bytes outside the reported span are unchanged, the span sits after the header and inside the definition, and the reference is the original text. */
function checkSpan(original: Buffer, masked: string, sym: SymbolInfo, range: [number, number] | undefined, reference: string | undefined): string | undefined {
  if (!range || reference === undefined || !sym.bytes) return "the masker reported no span";
  const [start, end] = range;
  if (start < sym.bytes.header_end || end > sym.bytes.end) {
    return `span ${start}-${end} leaves the body (header ends at ${sym.bytes.header_end}, definition at ${sym.bytes.end})`;
  }
  const out = Buffer.from(masked, "utf8");
  const tail = original.length - end;
  if (!out.subarray(0, start).equals(original.subarray(0, start))) return "text before the body changed";
  if (!out.subarray(out.length - tail).equals(original.subarray(end))) return "text after the body changed";
  if (original.subarray(start, end).toString("utf8") !== reference) return "the recorded reference differs from the original text";
  const inserted = out.subarray(start, out.length - tail).toString("utf8");
  if (!inserted.includes(formatTodo(sym.name))) return "the TODO comment is missing";
  return undefined;
}

/** Checks 1 and 3, from Python's side. */
function checkProbe(a: ProbeAnswer, before: ProbedDef): { check: SweepCheck; message: string } | undefined {
  if (!a.ok) return { check: "compile", message: `${a.error?.type}: ${a.error?.message} (line ${a.error?.line})` };
  const after = a.defs?.[0];
  if (!after) return { check: "signature", message: "Python's ast does not find the definition at its line" };
  for (const key of ["decorators", "async", "args", "returns", "doc"] as const) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) return { check: "signature", message: `${key} changed` };
  }
  const body = after.body ?? [];
  const expected = before.doc !== null ? 2 : 1;
  if (body.length !== expected || body[body.length - 1] !== RAISE_DUMP) {
    return { check: "body", message: `masked body is [${body.map((b) => b.slice(0, 40)).join(", ")}]` };
  }
  return undefined;
}

/** tree-sitter and Python's ast must find the same definitions (qualified name and line). */
function compareIndexes(file: string, symbols: SymbolInfo[], defs: ProbedDef[], report: SweepReport): void {
  const ours = new Set(symbols.map((s) => `${s.name}@${s.line}`));
  const theirs = new Set(defs.map((d) => `${d.name}@${d.line}`));
  for (const k of theirs) if (!ours.has(k)) report.failures.push({ file, check: "index", message: `tree-sitter misses ${k}` });
  for (const k of ours) if (!theirs.has(k)) report.failures.push({ file, check: "index", message: `tree-sitter finds ${k}, Python's ast does not` });
}

/** `N/M defs masked OK (xx.x%)`, then the failures and unparsed files. */
export function formatSweepReport(r: SweepReport): string {
  const pct = r.defs === 0 ? 100 : (100 * r.ok) / r.defs;
  const lines = [`${r.ok}/${r.defs} defs masked OK (${pct.toFixed(1)}%) in ${r.files} files, ${r.seconds.toFixed(1)} s, ${r.python}`];
  for (const u of r.unparsed) lines.push(`  unparsed ${u.file}: ${u.reason}`);
  for (const f of r.failures) lines.push(`  FAIL [${f.check}] ${f.file}${f.symbol ? ` ${f.symbol} (line ${f.line})` : ""}: ${f.message}`);
  return lines.join("\n");
}
