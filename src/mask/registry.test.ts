import { describe, expect, it } from "vitest";
import { LmrError } from "../core/errors.js";
import { listSupportedExtensions, maskerFor } from "./registry.js";

describe("maskerFor", () => {
  it("picks the Python masker by extension", () => {
    expect(maskerFor("pkg/model.py").language).toBe("python");
    expect(maskerFor("MODEL.PY").language).toBe("python");
    expect(listSupportedExtensions()).toContain(".py");
  });

  it("picks the TS/JS masker for TypeScript and JavaScript files", () => {
    for (const f of ["src/a.ts", "a.tsx", "a.mts", "a.cts"]) expect(maskerFor(f).language).toBe("typescript");
    for (const f of ["a.js", "a.mjs", "a.cjs", "a.jsx"]) expect(maskerFor(f).language).toBe("javascript");
  });

  it("rejects other languages with an input error", () => {
    for (const file of ["src/index.rb", "notebook.ipynb", "Makefile"]) {
      let caught: unknown;
      try {
        maskerFor(file);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(LmrError);
      expect((caught as LmrError).code).toBe("mask/unsupported-language");
      expect((caught as LmrError).kind).toBe("input");
      expect((caught as LmrError).hint).toContain(".py");
    }
  });
});
