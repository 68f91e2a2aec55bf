import { describe, expect, it } from "vitest";
import { pointAfter } from "./apply-edits.js";
import { ByteOffsets, detectEol, readLineIndent, startsItsLine } from "./text-layout.js";

describe("ByteOffsets", () => {
  it("matches Buffer.byteLength for every index of a mixed text", () => {
    const text = "ascii\r\nçé ✓\n😀 x\n\tend";
    const offsets = new ByteOffsets(text);
    for (let i = 0; i <= text.length; i++) {
      // skip the middle of a surrogate pair: tree-sitter never points there
      if (i > 0 && text.charCodeAt(i - 1) >= 0xd800 && text.charCodeAt(i - 1) < 0xdc00) continue;
      expect(offsets.at(i)).toBe(Buffer.byteLength(text.slice(0, i), "utf8"));
    }
    expect(new ByteOffsets("plain").at(3)).toBe(3);
  });
});

describe("line helpers", () => {
  it("reads indentation, line starts and line endings", () => {
    const text = "a\r\n\t  b = 1\nc";
    expect(readLineIndent(text, text.indexOf("b"))).toBe("\t  ");
    expect(startsItsLine(text, text.indexOf("b"))).toBe(true);
    expect(startsItsLine(text, text.indexOf("1"))).toBe(false);
    expect(detectEol(text, 0)).toBe("\r\n");
    expect(detectEol(text, text.indexOf("b"))).toBe("\n");
    expect(detectEol("no break", 0)).toBe("\n");
    expect(pointAfter({ row: 2, column: 4 }, "x\r\n  yz")).toEqual({ row: 3, column: 4 });
    expect(pointAfter({ row: 2, column: 4 }, "xyz")).toEqual({ row: 2, column: 7 });
  });
});
