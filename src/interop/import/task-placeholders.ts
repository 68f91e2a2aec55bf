import type { Target } from "../../manifest/types.js";

export interface TargetSignature {
  target: Target;
  /** Header of the definition, from the repository copy (undefined when it could not be read). */
  signature?: string;
}

/**
 * instruction.md for an imported task. The source benchmark's instruction is
 * never copied: this placeholder names the targets and asks for the text.
 */
export function renderPlaceholderInstruction(id: string, folder: string, targets: TargetSignature[]): string {
  const lines = [
    "# TODO: write the instruction in our own words",
    "",
    `Task \`${id}\` was imported from the LMR-Bench folder \`${folder}\`. Its instruction is not`,
    "copied: describe what to implement, the inputs and outputs, and where the paper explains it.",
    "",
    `## Target${targets.length === 1 ? "" : "s"}`,
    "",
  ];
  for (const { target, signature } of targets) {
    lines.push(`- \`${target.symbol}\` in \`${target.file}\` (mask mode ${target.mode})`);
    if (signature !== undefined) lines.push("", "  ```python", ...signature.split("\n").map((l) => `  ${l}`), "  ```", "");
  }
  return `${lines.join("\n").replace(/\n+$/, "")}\n`;
}

/** A grader test that fails until a person writes the real tests: `lmr validate` passes, `lmr verify` does not. */
export function renderPlaceholderTest(id: string, targets: Target[]): string {
  return [
    `"""Grader tests for ${id}: not written yet.`,
    "",
    `Replace this file with tests of ${targets.map((t) => `${t.file}::${t.symbol}`).join(", ")} that pass on`,
    "the reference and fail on the masked stub (see `lmr verify`).",
    '"""',
    "import pytest",
    "",
    "",
    "def test_grader_not_written():",
    '    pytest.fail("grader tests not written yet")',
    "",
  ].join("\n");
}
