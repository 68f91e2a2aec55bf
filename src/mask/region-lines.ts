import { LmrError } from "../core/errors.js";
import type { LineRef } from "../manifest/types.js";
import { findLineStart } from "./text-layout.js";

/** Where a region's line references are looked for: one definition of the masked file. */
interface RegionScope {
  /** String index of the definition's first line (a decorator's, or the header's). */
  start: number;
  /** String index just past the definition. */
  end: number;
  /** 1-based line of `start`. */
  line: number;
  qualname: string;
  /** How a message names the line the search starts at: "the `def` line", "the header line". */
  firstLine: string;
}

/**
 * A LineRef as a 1-based line (the Python and the TypeScript maskers' regions): `{line}` as
 * it is, `{anchor, occurrence}`: the n-th line of the definition, from its first line on,
 * that contains the anchor's text.
 */
export function resolveRegionLine(source: string, scope: RegionScope, ref: LineRef, which: "start" | "end", file: string | undefined): number {
  if ("line" in ref) {
    if (!Number.isInteger(ref.line) || ref.line < 1) {
      throw new LmrError({
        code: "mask/bad-region",
        file,
        pointer: `region.${which}.line`,
        message: `region ${which} line must be a positive integer, got ${String(ref.line)}`,
      });
    }
    return ref.line;
  }
  const wanted = ref.occurrence ?? 1;
  if (ref.anchor === "" || !Number.isInteger(wanted) || wanted < 1) {
    throw new LmrError({
      code: "mask/bad-region",
      file,
      pointer: `region.${which}`,
      message: `region ${which} needs a non-empty anchor and a positive occurrence`,
    });
  }
  let lineStart = findLineStart(source, scope.start);
  let line = scope.line;
  let seen = 0;
  while (lineStart < scope.end) {
    const next = source.indexOf("\n", lineStart);
    const lineEnd = next < 0 ? source.length : next;
    if (source.slice(lineStart, lineEnd).includes(ref.anchor) && ++seen === wanted) return line;
    if (next < 0) break;
    lineStart = next + 1;
    line++;
  }
  throw new LmrError({
    code: "mask/anchor-not-found",

    file,
    pointer: `region.${which}.anchor`,
    message: `anchor ${JSON.stringify(ref.anchor)} occurs ${seen} time(s) in ${scope.qualname}, wanted occurrence ${wanted}`,
    hint: `anchors are searched from ${scope.firstLine} to the end of the definition`,
  });
}
