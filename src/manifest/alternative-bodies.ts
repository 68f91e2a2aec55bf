import { LmrError } from "../core/errors.js";

/**
 * An alternative solution is committed as the bodies it writes, never as a
 * copy of the upstream file around them (third-party code stays out of the
 * repository): `alternatives/<name>/bodies.py` holds one block per masked
 * stub, each opened by a marker line
 *
 *     # lmr-body: path/in/workspace.py::Qualified.name
 *
 * and followed by the lines that replace that stub (the `# TODO: implement
 * NAME` line and the `raise NotImplementedError` under it), verbatim, with
 * the indentation they have in the file. Lines before the first marker are
 * notes for readers. The build splices the blocks into the masked workspace
 * file, so the bundle holds whole target files, graded as a submission is.
 */
export const BODIES_FILE = "bodies.py";

const MARKER = /^#\s*lmr-body:\s*(\S+?)::(\S+)\s*$/;

export interface BodyBlock {
  file: string;
  symbol: string;
  /** 1-based line of the marker in bodies.py. */
  line: number;
  lines: string[];
}

/** The blocks of a bodies file; an error names the file and line of a duplicate or an empty block. */
export function parseBodies(text: string, label: string): BodyBlock[] {
  const blocks: BodyBlock[] = [];
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  lines.forEach((l, i) => {
    const m = MARKER.exec(l);
    if (m) blocks.push({ file: m[1]!, symbol: m[2]!, line: i + 1, lines: [] });
    else blocks.at(-1)?.lines.push(l);
  });
  const seen = new Set<string>();
  for (const b of blocks) {
    while (b.lines.length > 0 && b.lines.at(-1)!.trim() === "") b.lines.pop();
    const key = `${b.file}::${b.symbol}`;
    if (seen.has(key)) throw bodiesError(label, b.line, `a second block for ${key}`, "keep one block per masked stub");
    seen.add(key);
    if (b.lines.length === 0)
      throw bodiesError(label, b.line, `the block for ${key} is empty`, "put the body's lines under the marker, indented as in the file");
  }
  if (blocks.length === 0)
    throw bodiesError(label, 1, "no '# lmr-body: FILE::SYMBOL' marker", "open each body with a marker line naming the file and the masked symbol");
  return blocks;
}

/** A masked stub: the TODO line and the raise/throw line under it, at one indentation. */
function findStub(lines: string[], symbol: string): number[] {
  const at: number[] = [];
  for (let i = 0; i + 1 < lines.length; i++) {
    const m = /^(\s*)(#|\/\/) TODO: implement (\S+)$/.exec(lines[i]!.replace(/\r$/, ""));
    if (!m || m[3] !== symbol) continue;
    const next = lines[i + 1]!.replace(/\r$/, "");
    if (next === `${m[1]}raise NotImplementedError` || next.startsWith(`${m[1]}throw new Error(`)) at.push(i);
  }
  return at;
}

/**
 * The workspace file `source` with each block's stub replaced by its lines.
 * Every stub of a target (`isTarget(name)`: the target's symbol, or a method
 * of a class target) must get a body, and every block must find its stub
 * exactly once: else an error naming the alternative and the symbol. Stubs of
 * code masked for other reasons (workspace.mask) stay as they are.
 */
export function spliceBodies(source: string, blocks: readonly BodyBlock[], file: string, label: string, isTarget: (name: string) => boolean): string {
  const eol = source.includes("\r\n") ? "\r\n" : "\n";
  let lines = source.split(/\n/).map((l) => l.replace(/\r$/, ""));
  for (const b of blocks) {
    const at = findStub(lines, b.symbol);
    if (at.length !== 1) {
      throw bodiesError(
        label,
        b.line,
        at.length === 0 ? `${file} has no masked stub for ${b.symbol}` : `${file} has ${at.length} stubs for ${b.symbol}`,
        "name the symbol as its '# TODO: implement NAME' line in the workspace does",
      );
    }
    lines = [...lines.slice(0, at[0]), ...b.lines, ...lines.slice(at[0]! + 2)];
  }
  const left = lines
    .map((l) => /^\s*(#|\/\/) TODO: implement (\S+)$/.exec(l)?.[2])
    .filter((s): s is string => s !== undefined && isTarget(s) && findStub(lines, s).length > 0);
  if (left.length > 0)
    throw bodiesError(
      label,
      1,
      `no body for ${left.map((s) => `${file}::${s}`).join(", ")}`,
      "add a '# lmr-body:' block for every masked stub of the target files",
    );
  return lines.join(eol);
}

function bodiesError(label: string, line: number, message: string, hint: string): LmrError {
  return new LmrError({ code: "alternative/bodies", file: label, message: `line ${line}: ${message}`, hint });
}
