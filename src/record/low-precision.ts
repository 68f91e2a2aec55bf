import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { maskerFor } from "../mask/registry.js";
import type { Target } from "../manifest/types.js";
import type { CallsFile } from "./calls.js";

/*
 * Low-precision code on the reference's path: a target that computes in bfloat16 or
 * float16 (a Newton–Schulz iteration written for bfloat16, say) gives results that two
 * correct implementations reproduce only to a few per cent, so replay tests at float32
 * tolerances fail right solutions, and loose tolerances pass wrong ones. Found from what
 * was recorded (tensors and arrays whose dtype is bfloat16/float16, a dtype argument) and
 * from the target's own source lines; `lmr record` warns, and verify can call it too.
 */

type LowDtype = "bfloat16" | "float16";

export interface LowPrecisionFinding {
  dtype: LowDtype;
  /** "trainers.py:12: X = G.bfloat16()" or "newton_schulz call 0, result". */
  where: string;
  from: "source" | "recording";
}

const TAG = "__lmr__";

function lowDtype(name: unknown): LowDtype | undefined {
  if (typeof name !== "string") return undefined;
  const n = name.replace(/^torch\./, "");
  if (n === "bfloat16") return "bfloat16";
  if (n === "float16" || n === "half" || n === "f2" || n === "<f2") return "float16";
  return undefined;
}

/** bfloat16/float16 values anywhere in a recorded call tree (tensors, arrays, numpy scalars, dtype arguments). */
function walk(tree: unknown, path: string, hit: (dtype: LowDtype, path: string) => void): void {
  if (Array.isArray(tree)) {
    tree.forEach((x, i) => walk(x, `${path}[${i}]`, hit));
    return;
  }
  if (typeof tree !== "object" || tree === null) return;
  const node = tree as Record<string, unknown>;
  const kind = node[TAG];
  if (kind === "tensor" || kind === "ndarray" || kind === "npscalar") {
    const d = lowDtype(node.dtype);
    if (d) hit(d, path);
  } else if (kind === "torch_dtype") {
    const d = lowDtype(node.name);
    if (d) hit(d, path);
  }
  for (const [k, v] of Object.entries(node)) if (k !== TAG) walk(v, path === "" ? k : `${path}.${k}`, hit);
}

/** Low-precision values in a recording: the first per target and dtype (one is enough to say where). */
export function findInRecording(calls: CallsFile): LowPrecisionFinding[] {
  const out: LowPrecisionFinding[] = [];
  for (const t of calls.targets ?? []) {
    const seen = new Set<LowDtype>();
    for (const c of t.calls) {
      const parts: [string, unknown][] = [
        ["args", c.args],
        ["kwargs", c.kwargs],
        ["result", c.result],
        ["mutated", c.mutated],
        ["self", c.self],
        ["yields", c.yields],
      ];
      for (const [name, tree] of parts) {
        walk(tree, name, (dtype, path) => {
          if (seen.has(dtype)) return;
          seen.add(dtype);
          out.push({ dtype, where: `${t.symbol} call ${c.index}, ${path}`, from: "recording" });
        });
      }
    }
  }
  return out;
}

/** `torch.bfloat16`, `.half()`, `dtype="float16"`, `np.float16`, `autocast(...)` on a code line. */
const SOURCE_PATTERNS: [RegExp, LowDtype][] = [
  [/\bbfloat16\b|\.bfloat16\s*\(/, "bfloat16"],
  [/\bfloat16\b|\.half\s*\(|\btorch\.half\b/, "float16"],
  [/\bautocast\s*\(/, "bfloat16"],
];

/** Low-precision lines of the targets' own source (decorators and body), from the reference files. */
export async function findInTargets(targets: readonly Target[], referenceRoot: string): Promise<LowPrecisionFinding[]> {
  const out: LowPrecisionFinding[] = [];
  for (const t of targets) {
    const text = await readFile(join(referenceRoot, t.file), "utf8").catch(() => undefined);
    if (text === undefined) continue;
    let symbols;
    try {
      symbols = await maskerFor(t.file).listSymbols(text);
    } catch {
      continue; // not a language lmr reads symbols of: nothing to say
    }
    const s = symbols.find((x) => x.name === t.symbol && (t.line === undefined || x.line === t.line));
    if (!s) continue;
    const lines = text.split("\n");
    for (let n = s.decorator_line ?? s.line; n <= s.end_line; n++) {
      const code = (lines[n - 1] ?? "").replace(/#.*$/, "");
      const dtype = SOURCE_PATTERNS.find(([re]) => re.test(code))?.[1];
      if (dtype) out.push({ dtype, where: `${t.file}:${n}: ${code.trim()}`, from: "source" });
    }
  }
  return out;
}

/**
 * The warning for a person, or undefined when the reference's path stays in full precision.
 * One line of what was found (a few places), then the pattern to follow.
 */
export function formatLowPrecisionWarning(findings: readonly LowPrecisionFinding[]): string | undefined {
  if (findings.length === 0) return undefined;
  const dtypes = [...new Set(findings.map((f) => f.dtype))].join(" and ");
  const shown = findings.slice(0, 3).map((f) => f.where);
  const more = findings.length > shown.length ? ` and ${findings.length - shown.length} more` : "";
  return (
    `the reference's path runs in ${dtypes} (${shown.join("; ")}${more}): two correct solutions can differ by several per cent there, ` +
    "so replays at float32 tolerances fail right solutions and loose ones pass wrong ones. Record the calls in float32 (the driver passes float32 inputs, " +
    "or the task's set-up makes the low-precision cast a no-op), state the dtype the tests use in the instruction, and check the low-precision path, " +
    'if at all, with a property test at a tolerance measured on two independent solutions (CONTRIBUTING.md, "Low-precision code")'
  );
}
