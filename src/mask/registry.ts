import { extname } from "node:path";
import { LmrError } from "../core/errors.js";
import { PythonMasker } from "./python/masker.js";
import { TsMasker } from "./ts/masker.js";
import type { Masker } from "./types.js";

// TS/JS maskers are cheap to make: ts-morph loads on their first use
const maskers: Masker[] = [new PythonMasker(), new TsMasker("ts"), new TsMasker("tsx"), new TsMasker("js"), new TsMasker("jsx")];

/** The masker for a file, chosen by its extension. */
export function maskerFor(file: string): Masker {
  const ext = extname(file).toLowerCase();
  const found = maskers.find((m) => m.extensions.includes(ext));
  if (!found) {
    const known = [...new Set(maskers.flatMap((m) => m.extensions))].join(", ");
    throw new LmrError({
      code: "mask/unsupported-language",
      file,
      message: `no masker for "${ext || "(no extension)"}" files`,
      hint: `supported: ${known}`,
    });
  }
  return found;
}

export function listSupportedExtensions(): string[] {
  return [...new Set(maskers.flatMap((m) => m.extensions))];
}
