import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ERROR_CODES, ERROR_CODE_PATTERN, isErrorCode } from "../../src/core/error-codes.js";
import { EXIT, exitCodeFor, LmrError } from "../../src/core/errors.js";

const ROOT = join(import.meta.dirname, "..", "..");

function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(ext) && !f.endsWith(`.test${ext}`) && !f.includes("__pycache__"))
    .map((f) => join(dir, f));
}

/** Every string literal written where a code goes: `code: "..."` (also both arms of `a ? "x" : "y"`), `fail("...")`, `usageError(..., "...")`. */
function codeLiterals(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\bcode: ([^,\n}]+)/g)) for (const s of m[1]!.matchAll(/"([^"]+)"/g)) found.push(s[1]!);
  for (const m of text.matchAll(/\bfail\(\s*"([a-z]+[-/][^"]*)"/g)) found.push(m[1]!);
  for (const m of text.matchAll(/\busageError\([^;]*?,\s*"([a-z]+\/[^"]+)",?\s*\)/g)) found.push(m[1]!);
  return found;
}

describe("error codes", () => {
  it("all follow one style, area/kebab-case", () => {
    const off = Object.keys(ERROR_CODES).filter((c) => !ERROR_CODE_PATTERN.test(c));
    expect(off).toEqual([]);
    expect(ERROR_CODE_PATTERN.test("RUN_SYMLINK_PATH")).toBe(false);
    expect(ERROR_CODE_PATTERN.test("report.not-a-run")).toBe(false);
    expect(ERROR_CODE_PATTERN.test("manifest-invalid")).toBe(false);
    expect(ERROR_CODE_PATTERN.test("mask/bad-region")).toBe(true);
  });

  it("every code written in src/ and in the Python record harness is in the table", () => {
    const unknown: string[] = [];
    const seen = new Set<string>();
    for (const file of filesUnder(join(ROOT, "src"), ".ts")) {
      for (const code of codeLiterals(readFileSync(file, "utf8"))) {
        // `code:` is also a field of other records (exit codes, process results): only strings shaped like codes count
        if (!/^[a-zA-Z_]+[-/._][a-zA-Z0-9_./-]+$/.test(code) || code.startsWith("./") || code.includes(" ")) continue;
        seen.add(code);
        if (!isErrorCode(code)) unknown.push(`${relative(ROOT, file)}: ${code}`);
      }
    }
    // the record harness reports its own failures by code (RecordError("record/...", ...)), read back by record-python.ts
    for (const file of filesUnder(join(ROOT, "python", "lmr_record"), ".py")) {
      for (const m of readFileSync(file, "utf8").matchAll(/"(record[-/][a-z-]+)"/g)) {
        seen.add(m[1]!);
        if (!isErrorCode(m[1])) unknown.push(`${relative(ROOT, file)}: ${m[1]}`);
      }
    }
    expect(unknown).toEqual([]);
    // the scan is not vacuous: it sees codes of every style of call site
    for (const c of ["mask/bad-region", "prepare/block-escapes", "new/task-exists", "record/unreplayable", "queue/auth", "upstream/not-found"])
      expect(seen).toContain(c);
  });

  it("every code in the table is raised somewhere (no stale entries)", () => {
    const text = [...filesUnder(join(ROOT, "src"), ".ts"), ...filesUnder(join(ROOT, "python", "lmr_record"), ".py")]
      .map((f) => readFileSync(f, "utf8"))
      .join("\n");
    // `env/${plan.layer}-build-failed` in env/build.ts names these two through the layer
    const viaTemplate = new Set(["env/base-build-failed", "env/env-build-failed"]);
    const stale = Object.keys(ERROR_CODES).filter((c) => !viaTemplate.has(c) && !text.includes(`"${c}"`));
    expect(stale).toEqual([]);
    expect(text).toContain("`env/${plan.layer}-build-failed`");
  });

  it("the code decides the kind and the exit code", () => {
    expect(new LmrError({ code: "usage/bad-number", message: "x" }).kind).toBe("usage");
    expect(exitCodeFor(new LmrError({ code: "usage/bad-number", message: "x" }))).toBe(EXIT.input);
    expect(exitCodeFor(new LmrError({ code: "mask/masked-parse-error", message: "x" }))).toBe(EXIT.check);
    expect(exitCodeFor(new LmrError({ code: "queue/unreachable", message: "x" }))).toBe(EXIT.infra);
    expect(exitCodeFor(new LmrError({ code: "manifest/invalid", message: "x" }))).toBe(EXIT.input);
    expect(new LmrError({ code: "paper/hash-mismatch", message: "x" }).toJSON()).toMatchObject({ code: "paper/hash-mismatch", kind: "check" });
  });
});
