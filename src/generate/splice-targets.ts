import { extname } from "node:path";
import { maskerFor } from "../mask/registry.js";
import type { Masker, SymbolInfo } from "../mask/types.js";
import type { MaskMode } from "../manifest/types.js";
import { extractCodeBlocks, selectBlocks, type CodeBlock } from "./parse-reply.js";

export interface SpliceTarget {
  file: string;
  symbol: string;
  mode: MaskMode;
}

export type SpliceOutcome =
  { ok: true; files: Record<string, string>; found: string[]; missing: string[]; helpers: string[]; notes: string[] } | { ok: false; reason: string };

interface ParsedBlock {
  block: CodeBlock;
  bytes: Buffer;
  symbols: SymbolInfo[];
}

/**
 * Turns a reply into new contents of the masked files: each target's
 * definition found in the reply (by its qualified name, else by its last
 * name at any depth: a method given without its class) replaces the masked
 * definition, re-indented to its place. New module-level helpers and imports
 * from the block that gave a target go just above the target's top-level
 * definition. Anything else the reply rewrites is ignored: only targets are
 * taken. A reply with no usable code is `ok: false` with the reason, which
 * becomes the sample's `invalid` verdict.
 */
export async function spliceReply(reply: string, targets: SpliceTarget[], masked: Record<string, string>): Promise<SpliceOutcome> {
  if (reply.trim() === "") return { ok: false, reason: "the reply is empty" };
  const all = extractCodeBlocks(reply);
  if (all.length === 0) return { ok: false, reason: "the reply holds no code (no fenced block, no definition)" };
  const files: Record<string, string> = {};
  const found: string[] = [];
  const missing: string[] = [];
  const helpers: string[] = [];
  const notes: string[] = [];
  const byFile = new Map<string, SpliceTarget[]>();
  for (const t of targets) byFile.set(t.file, [...(byFile.get(t.file) ?? []), t]);
  const seenNames: string[] = [];
  for (const [file, fileTargets] of byFile) {
    const masker = maskerFor(file);
    const parsed: ParsedBlock[] = [];
    for (const block of selectBlocks(all, extname(file))) {
      try {
        parsed.push({ block, bytes: Buffer.from(block.code), symbols: await masker.listSymbols(block.code) });
      } catch (err) {
        notes.push(`code block ${block.index} does not parse (${(err as Error).message}); skipped`);
      }
    }
    seenNames.push(...parsed.flatMap((p) => p.symbols.map((s) => s.name)));
    const source = masked[file]!;
    const maskedSymbols = await listMaskedSymbols(masker, source);
    const edits: { start: number; end: number; text: string }[] = [];
    const fromBlocks = new Set<ParsedBlock>();
    const used = new Set<SymbolInfo>();
    for (const t of fileTargets) {
      const hit = findDefinition(parsed, t.symbol);
      const place = maskedSymbols.find((s) => s.name === t.symbol);
      if (!hit || !place?.bytes) {
        missing.push(t.symbol);
        continue;
      }
      fromBlocks.add(hit.block);
      used.add(hit.symbol);
      const srcBytes = Buffer.from(source);
      const indent = lineIndent(srcBytes, place.bytes.start);
      edits.push({ start: place.bytes.start, end: place.bytes.end, text: reindent(definitionText(hit.block, hit.symbol), hit.indent, indent) });
      found.push(t.symbol);
    }
    if (edits.length === 0) continue;
    const extra = collectHelpers([...fromBlocks], fileTargets, used, maskedSymbols, source);
    if (extra.text !== "") {
      const first = Math.min(...edits.map((e) => topLevelStart(maskedSymbols, source, e.start)));
      edits.push({ start: first, end: first, text: extra.text });
      helpers.push(...extra.names);
    }
    files[file] = applyByteEdits(source, edits);
    try {
      const after = await masker.listSymbols(files[file]!);
      const lost = fileTargets.filter((t) => found.includes(t.symbol) && !after.some((s) => s.name === t.symbol));
      if (lost.length > 0)
        return { ok: false, reason: `after splicing the reply into ${file}, ${lost.map((t) => t.symbol).join(", ")} is no longer defined there` };
    } catch (err) {
      return { ok: false, reason: `the reply's code does not fit into ${file}: ${(err as Error).message}` };
    }
  }
  if (found.length === 0) {
    const names = [...new Set(seenNames)].slice(0, 8);
    const parseNote = notes.length > 0 ? `; ${notes.join("; ")}` : "";
    return {
      ok: false,
      reason: `the reply's code defines none of the targets (${targets.map((t) => t.symbol).join(", ")})${names.length > 0 ? `; it defines ${names.join(", ")}` : ""}${parseNote}`,
    };
  }
  return { ok: true, files, found, missing, helpers, notes };
}

/** The masked files' symbol tables: every sample of a task splices into the same file, so parse it once. */
const maskedTables = new Map<string, Promise<SymbolInfo[]>>();
function listMaskedSymbols(masker: Masker, source: string): Promise<SymbolInfo[]> {
  const key = `${masker.language}\0${source}`;
  let table = maskedTables.get(key);
  if (!table) {
    if (maskedTables.size >= 64) maskedTables.delete(maskedTables.keys().next().value!);
    table = masker.listSymbols(source);
    table.catch(() => maskedTables.delete(key));
    maskedTables.set(key, table);
  }
  return table;
}

/** The latest definition of `symbol` in the blocks: the exact qualified name first, else one whose last name matches. */
function findDefinition(parsed: ParsedBlock[], symbol: string): { block: ParsedBlock; symbol: SymbolInfo; indent: string } | undefined {
  const last = symbol.split(".").pop()!;
  for (const exact of [true, false]) {
    for (const block of [...parsed].reverse()) {
      const hits = block.symbols.filter((s) => s.bytes && (exact ? s.name === symbol : s.name.split(".").pop() === last));
      const hit = hits[hits.length - 1];
      if (hit) return { block, symbol: hit, indent: lineIndent(block.bytes, hit.bytes!.start) };
    }
  }
  return undefined;
}

function definitionText(block: ParsedBlock, s: SymbolInfo): string {
  return block.bytes.subarray(s.bytes!.start, s.bytes!.end).toString("utf8");
}

/** The whitespace between the start of the line holding byte `at` and `at`. */
function lineIndent(bytes: Buffer, at: number): string {
  let i = at;
  while (i > 0 && bytes[i - 1] !== 0x0a) i--;
  const lead = bytes.subarray(i, at).toString("utf8");
  return /^[ \t]*$/.test(lead) ? lead : "";
}

/** Moves a definition from indentation `from` to `to`; its first line starts at the definition, so it gets none. */
function reindent(text: string, from: string, to: string): string {
  const lines = text.split("\n");
  return lines
    .map((line, i) => {
      if (i === 0) return line;
      if (line.trim() === "") return "";
      return to + (line.startsWith(from) ? line.slice(from.length) : line.replace(/^[ \t]*/, ""));
    })
    .join("\n");
}

/**
 * Module-level definitions and imports the reply adds, as text to insert: not
 * a definition spliced as a target (a method given on its own is top-level in
 * the reply), not a target's name, not a name the file already defines.
 */
function collectHelpers(
  blocks: ParsedBlock[],
  targets: SpliceTarget[],
  used: Set<SymbolInfo>,
  maskedSymbols: SymbolInfo[],
  source: string,
): { text: string; names: string[] } {
  const topTargets = new Set(targets.map((t) => t.symbol.split(".")[0]!));
  const existing = new Set(maskedSymbols.filter((s) => !s.name.includes(".")).map((s) => s.name));
  const parts: string[] = [];
  const names: string[] = [];
  const haveLines = new Set(source.split("\n").map((l) => l.trim()));
  for (const b of blocks) {
    for (const imp of findImports(b.block.code)) {
      if (!haveLines.has(imp.trim()) && !parts.includes(imp)) parts.push(imp);
    }
  }
  const importCount = parts.length;
  for (const b of blocks) {
    for (const s of b.symbols) {
      if (used.has(s) || s.name.includes(".") || topTargets.has(s.name) || existing.has(s.name) || names.includes(s.name) || !s.bytes) continue;
      parts.push(definitionText(b, s));
      names.push(s.name);
    }
  }
  if (parts.length === 0) return { text: "", names };
  const imports = parts.slice(0, importCount).join("\n");
  const defs = parts.slice(importCount).join("\n\n\n");
  return {
    text: [imports, defs].filter((p) => p !== "").join("\n\n\n") + "\n\n\n",
    names: [...(importCount > 0 ? [`${importCount} import(s)`] : []), ...names],
  };
}

/** Top-level `import …` / `from … import …` statements of a block (a parenthesised list may span lines). */
function findImports(code: string): string[] {
  const out: string[] = [];
  const lines = code.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!/^(import\s|from\s+\S+\s+import\s)/.test(line)) continue;
    // Only valid at the top of a module: inserted above a target it would be a SyntaxError.
    if (/^from\s+__future__\s/.test(line)) continue;
    let stmt = line;
    while (stmt.includes("(") && !stmt.includes(")") && i + 1 < lines.length) stmt += `\n${lines[++i]}`;
    while (stmt.endsWith("\\") && i + 1 < lines.length) stmt += `\n${lines[++i]}`;
    out.push(stmt.trimEnd());
  }
  return out;
}

/** Byte offset of the line start of the top-level definition holding byte `at`. */
function topLevelStart(symbols: SymbolInfo[], source: string, at: number): number {
  const outer = symbols.filter((s) => !s.name.includes(".") && s.bytes && s.bytes.start <= at && at < s.bytes.end)[0];
  const start = outer?.bytes?.start ?? at;
  const bytes = Buffer.from(source);
  let i = start;
  while (i > 0 && bytes[i - 1] !== 0x0a) i--;
  return i;
}

/** Applies [start, end) byte replacements, last first, so earlier offsets stay valid. */
function applyByteEdits(source: string, edits: { start: number; end: number; text: string }[]): string {
  let bytes = Buffer.from(source);
  for (const e of [...edits].sort((a, b) => b.start - a.start || b.end - a.end)) {
    bytes = Buffer.concat([bytes.subarray(0, e.start), Buffer.from(e.text), bytes.subarray(e.end)]);
  }
  return bytes.toString("utf8");
}
