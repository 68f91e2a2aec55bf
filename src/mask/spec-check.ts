import { LmrError, type ErrorCode } from "../core/errors.js";
import type { MaskSpec } from "./types.js";

const MODES = new Set(["body", "region", "class"]);

/** An input error about one spec, pointing at its symbol. */
type SpecFailure = (code: ErrorCode, message: string, hint: string) => never;

/**
 * The checks both maskers make of a spec before planning its edits: a known mode, and a
 * region exactly when the mode is region. Returns how to fail on the spec.
 */
export function checkSpecMode(spec: MaskSpec, file: string | undefined): SpecFailure {
  const fail: SpecFailure = (code, message, hint) => {
    throw new LmrError({ code, file, pointer: spec.symbol, message, hint });
  };
  if (!MODES.has(spec.mode)) fail("mask/bad-mode", `unknown mask mode "${String(spec.mode)}"`, "use body, region or class");
  if (spec.region && spec.mode !== "region") fail("mask/bad-mode", `a region is given but the mode is "${spec.mode}"`, "use mode region, or drop the region");
  if (spec.mode === "region" && !spec.region) fail("mask/bad-region", `mode region needs a region for "${spec.symbol}"`, "give region {start, end}");
  return fail;
}
