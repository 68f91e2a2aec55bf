import { describe, expect, it } from "vitest";
import { emptyRecord, settleRecord, type VerificationRecord } from "../../src/verify/record.js";
import { compileVerifySchemas, schemaErrors } from "./schemas.js";

const { record: validateRecord, output: validateOutput } = compileVerifySchemas();
const HASH = "a".repeat(64);
const SETTINGS = { runs: 3, mutants: 20, min_kill_ratio: 0.8, min_alternatives: 2, seed: 1 };

function passing(): VerificationRecord {
  const r = emptyRecord("pref-loss", SETTINGS, { task: HASH, upstream: { location: "../up", commit: null, tree: HASH } }, "0.1.0");
  for (const s of ["manifest", "build", "fixtures", "reference", "environment", "stub", "alternatives", "mutants", "leaks"] as const) {
    r.steps[s] = { ...r.steps[s], ok: true, duration_s: 0.5 };
    delete r.steps[s].skipped;
    delete r.steps[s].reason;
  }
  const settled = settleRecord(r);
  expect(settled.ok, JSON.stringify(settled.failure)).toBe(true);
  return settled;
}

describe("schema/verification.schema.json and verify-output.schema.json", () => {
  it("accept a settled record, passing or failing", () => {
    expect(schemaErrors(validateRecord, passing())).toEqual([]);
    const failing = settleRecord(emptyRecord("t", SETTINGS, { task: HASH, upstream: { location: "x", commit: "b".repeat(40) } }, "0.1.0"));
    expect(failing.failure).toMatchObject({ step: "manifest", kind: "check" });
    expect(schemaErrors(validateRecord, failing)).toEqual([]);
  });

  it("tie ok to failure: a failed record names its failure, a passing one has none", () => {
    const noFailure = { ...passing(), ok: false };
    expect(schemaErrors(validateRecord, noFailure).join("\n")).toContain("failure");
    const both = { ...passing(), failure: { step: "stub", reason: "x", kind: "check" } };
    expect(schemaErrors(validateRecord, both)).not.toEqual([]);
  });

  it("require a reason on a failed step and reject unknown fields", () => {
    const r = passing();
    expect(schemaErrors(validateRecord, { ...r, steps: { ...r.steps, build: { ok: false, duration_s: 0 } } }).join("\n")).toContain("reason");
    expect(schemaErrors(validateRecord, { ...r, steps: { ...r.steps, build: { ok: true, duration_s: 0, extra: 1 } } })).not.toEqual([]);
    expect(schemaErrors(validateRecord, { ...r, unchanged: true })).not.toEqual([]);
  });

  it("--json data: records carry `unchanged`; the envelope's ok and error are not part of it", () => {
    expect(schemaErrors(validateOutput, { tasks: [{ ...passing(), unchanged: true }] })).toEqual([]);
    expect(schemaErrors(validateOutput, { tasks: [passing()] })).not.toEqual([]);
    expect(schemaErrors(validateOutput, { ok: true, tasks: [{ ...passing(), unchanged: true }] })).not.toEqual([]);
    expect(schemaErrors(validateOutput, {})).not.toEqual([]);
  });
});
