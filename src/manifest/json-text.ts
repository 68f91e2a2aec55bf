/**
 * JSON text with positions. JSON.parse says where it failed only sometimes (Node 20
 * prints "at position N" for some errors and a quoted excerpt for others) and keeps
 * the last of duplicate keys silently, so a small scanner of our own finds the exact
 * offset of the first syntax error and every duplicate key.
 */

export interface JsonSyntaxError {
  offset: number;
  line: number;
  column: number;
  message: string;
}

export interface DuplicateKey {
  /** JSON pointer of the repeated member. */
  pointer: string;
  key: string;
  line: number;
  firstLine: number;
}

export type JsonParseResult = { ok: true; value: unknown; duplicateKeys: DuplicateKey[] } | { ok: false; error: JsonSyntaxError };

/** 1-based line and column (UTF-16 units, as editors count) of a string offset. CRLF and CR end lines too. */
export function locateOffset(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** The offset in a V8 JSON.parse message ("... at position N"), if it names one. */
export function positionFromParseMessage(message: string, text: string): number | undefined {
  const m = /at position (\d+)/.exec(message);
  if (m?.[1] !== undefined) return Number(m[1]);
  if (/Unexpected end of JSON input/.test(message)) return text.length;
  return undefined;
}

export function parseJsonText(text: string): JsonParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const scanned = scanJson(text);
    if (scanned.error) return { ok: false, error: scanned.error };
    // The scanner accepted what V8 rejected: fall back to V8's own position.
    const message = err instanceof Error ? err.message : String(err);
    const offset = positionFromParseMessage(message, text) ?? 0;
    return { ok: false, error: { offset, ...locateOffset(text, offset), message } };
  }
  return { ok: true, value, duplicateKeys: scanJson(text).duplicateKeys };
}

class ScanError extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

const MAX_DEPTH = 512;

/** Walks JSON text; reports the first syntax error (offset + readable message) and duplicate keys. */
export function scanJson(text: string): { error?: JsonSyntaxError; duplicateKeys: DuplicateKey[] } {
  const duplicateKeys: DuplicateKey[] = [];
  let i = 0;

  const describe = (at: number): string => {
    if (at >= text.length) return "end of file";
    const c = text[at]!;
    return /\s/.test(c) ? `whitespace U+${c.charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()}` : `'${c}'`;
  };
  const fail = (message: string, at = i): never => {
    throw new ScanError(at, message);
  };
  const skipSpace = (): void => {
    while (i < text.length) {
      const c = text[i];
      if (c === " " || c === "\t" || c === "\n" || c === "\r") i++;
      else break;
    }
  };
  const expect = (c: string, what: string): void => {
    if (text[i] !== c) fail(`expected ${what}, found ${describe(i)}`);
    i++;
  };

  const scanString = (): string => {
    const start = i;
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail("string is never closed (it starts here)", start);
      const code = text.charCodeAt(i);
      if (code === 34) break;
      if (code < 0x20) fail("control character in string (escape it, e.g. \\n)");
      if (code === 92) {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail("bad \\u escape: expected 4 hex digits");
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) fail(`bad escape '\\${e ?? ""}'`);
        i += 2;
        continue;
      }
      i++;
    }
    i++; // closing quote
    return JSON.parse(text.slice(start, i)) as string;
  };

  const isDigit = (at: number) => {
    const c = text.charCodeAt(at);
    return c >= 48 && c <= 57;
  };
  const digits = (what: string): void => {
    if (!isDigit(i)) fail(`${what}, found ${describe(i)}`);
    while (isDigit(i)) i++;
  };
  const scanNumber = (): void => {
    if (text[i] === "-") i++;
    if (text[i] === "0") {
      i++;
      if (isDigit(i)) fail("numbers cannot have leading zeros");
    } else {
      digits("expected a digit after '-'");
    }
    if (text[i] === ".") {
      i++;
      digits("expected a digit after the decimal point");
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      digits("expected a digit in the exponent");
    }
  };

  const scanValue = (pointer: string, depth: number): void => {
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH}`);
    skipSpace();
    const c = text[i];
    if (c === "{") return scanObject(pointer, depth);
    if (c === "[") return scanArray(pointer, depth);
    if (c === '"') {
      scanString();
      return;
    }
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return scanNumber();
    for (const word of ["true", "false", "null"]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    if (c === "'") fail("strings must use double quotes");
    fail(`expected a value, found ${describe(i)}`);
  };

  const scanObject = (pointer: string, depth: number): void => {
    i++;
    const seen = new Map<string, number>();
    skipSpace();
    if (text[i] === "}") {
      i++;
      return;
    }
    for (;;) {
      skipSpace();
      if (text[i] !== '"') fail(text[i] === "}" ? "trailing comma before '}'" : `expected a "quoted" key, found ${describe(i)}`);
      const keyAt = i;
      const key = scanString();
      const memberPointer = `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
      const first = seen.get(key);
      if (first !== undefined) {
        duplicateKeys.push({ pointer: memberPointer, key, line: locateOffset(text, keyAt).line, firstLine: locateOffset(text, first).line });
      } else {
        seen.set(key, keyAt);
      }
      skipSpace();
      expect(":", "':' after the key");
      scanValue(memberPointer, depth + 1);
      skipSpace();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "}") {
        i++;
        return;
      }
      fail(`expected ',' or '}' after an object member, found ${describe(i)}`);
    }
  };

  const scanArray = (pointer: string, depth: number): void => {
    i++;
    skipSpace();
    if (text[i] === "]") {
      i++;
      return;
    }
    for (let index = 0; ; index++) {
      skipSpace();
      if (text[i] === "]") fail("trailing comma before ']'");
      scanValue(`${pointer}/${index}`, depth + 1);
      skipSpace();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "]") {
        i++;
        return;
      }
      fail(`expected ',' or ']' after an array item, found ${describe(i)}`);
    }
  };

  try {
    if (text.charCodeAt(0) === 0xfeff) fail("file starts with a byte-order mark (BOM)", 0);
    skipSpace();
    if (i >= text.length) fail("file is empty");
    scanValue("", 0);
    skipSpace();
    if (i < text.length) fail(`unexpected ${describe(i)} after the end of the JSON value`);
  } catch (err) {
    if (!(err instanceof ScanError)) throw err;
    return { error: { offset: err.offset, ...locateOffset(text, err.offset), message: err.message }, duplicateKeys };
  }
  return { duplicateKeys };
}
