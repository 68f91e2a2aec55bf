import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { locateOffset, parseJsonText, positionFromParseMessage, scanJson } from "./json-text.js";

function v8Position(text: string): number | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    return positionFromParseMessage((err as Error).message, text);
  }
}

describe("locateOffset", () => {
  it("counts 1-based lines and columns across LF, CRLF and CR line ends", () => {
    const text = "ab\ncd\r\nef\rgh";
    expect(locateOffset(text, 0)).toEqual({ line: 1, column: 1 });
    expect(locateOffset(text, 2)).toEqual({ line: 1, column: 3 });
    expect(locateOffset(text, 3)).toEqual({ line: 2, column: 1 });
    expect(locateOffset(text, 7)).toEqual({ line: 3, column: 1 });
    expect(locateOffset(text, 10)).toEqual({ line: 4, column: 1 });
    expect(locateOffset(text, 11)).toEqual({ line: 4, column: 2 });
  });

  it("clamps offsets past the end to the end", () => {
    expect(locateOffset("a\nb", 99)).toEqual({ line: 2, column: 2 });
  });
});

describe("scanJson error offsets", () => {
  // Structural errors where V8 names a position: ours must be the same place.
  const sameAsV8 = [
    '{"a": 1 "b": 2}',
    '{"a": 1,}',
    "{'a': 1}",
    '{"a": 01}',
    '{"a": 1.}',
    "[-]",
    '{"a": "\u0001"}',
    "{} x",
    '{"a" 1}',
    "[1 2]",
    '{"a": 1e}',
    '{"a": -01}',
    "[1]]",
    '{"a":1,,"b":2}',
    "",
    "   ",
  ];
  it.each(sameAsV8)("agrees with V8 on %j", (text) => {
    const expected = v8Position(text);
    expect(expected).toBeTypeOf("number");
    expect(scanJson(text).error?.offset).toBe(expected);
  });

  // V8 names no position for these (or a less useful one): pin ours.
  it.each([
    ["[tru]", 1, "expected a value"],
    ["[1,]", 3, "trailing comma before ']'"],
    ["[,1]", 1, "expected a value"],
    ['{"a": NaN}', 6, "expected a value"],
    ['{"a": "x', 6, "never closed"],
    ['{"a": "\\q"}', 7, "bad escape"],
    ['{"a": "\\u12g4"}', 7, "\\u escape"],
    ["\ufeff{}", 0, "byte-order mark"],
  ] as const)("points %j at offset %i (%s)", (text, offset, words) => {
    const error = scanJson(text).error;
    expect(error?.offset).toBe(offset);
    expect(error?.message).toContain(words);
  });

  it("accepts everything JSON.parse accepts in this repository's JSON files", () => {
    for (const file of ["package.json", "package-lock.json", "tsconfig.json", "schema/task.schema.json"]) {
      const text = readFileSync(file, "utf8");
      expect(() => JSON.parse(text)).not.toThrow();
      expect(scanJson(text).error, file).toBeUndefined();
    }
    expect(scanJson('[1e5, 2E-3, -0.5, 0, "\\u00e9\\n", true, false, null, {}, []]').error).toBeUndefined();
  });
});

describe("parseJsonText", () => {
  it("reports line and column of the bad-json fixture's missing comma", () => {
    const text = readFileSync("test/fixtures/manifests/bad-json/task.json", "utf8");
    const result = parseJsonText(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect([result.error.line, result.error.column]).toEqual([5, 3]);
    expect(result.error.offset).toBe(v8Position(text));
  });

  it("finds duplicate keys with their JSON pointers and lines", () => {
    const text = '{\n "a": {"x/y": 1,\n  "x/y": 2},\n "b": [{"~k": 0, "~k": 1}],\n "a": 3\n}';
    const result = parseJsonText(text);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.duplicateKeys).toEqual([
      { pointer: "/a/x~1y", key: "x/y", line: 3, firstLine: 2 },
      { pointer: "/b/0/~0k", key: "~k", line: 4, firstLine: 4 },
      { pointer: "/a", key: "a", line: 5, firstLine: 2 },
    ]);
    expect(result.value).toEqual({ a: 3, b: [{ "~k": 1 }] });
  });
});
