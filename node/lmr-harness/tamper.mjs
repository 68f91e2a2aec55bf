// What code under test could rebind to change a verdict without the key: the test API,
// the assertion functions, and the primitives the harness itself uses. Snapshotted by the
// preload before any test file is imported, compared by the reporter at the end.
import assert from "node:assert";
import strict from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import test from "node:test";

const TEST_API = ["test", "it", "describe", "suite", "before", "after", "beforeEach", "afterEach"];

function watched() {
  const out = [];
  for (const name of TEST_API) out.push([`node:test ${name}`, test, name]);
  for (const [label, owner] of [
    ["node:assert", assert],
    ["node:assert/strict", strict],
  ]) {
    for (const name of Object.keys(owner)) if (typeof owner[name] === "function") out.push([`${label} ${name}`, owner, name]);
  }
  out.push(
    ["process.reallyExit", process, "reallyExit"],
    ["fs.writeSync", fs, "writeSync"],
    ["crypto.createHmac", crypto, "createHmac"],
    ["JSON.stringify", JSON, "stringify"],
  );
  return out;
}

/** The watched values now; assert objects are also frozen, so rebinding them fails outright. */
export function takeSnapshot() {
  const snap = watched().map(([label, owner, name]) => [label, owner, name, owner[name]]);
  Object.freeze(assert);
  Object.freeze(strict);
  return snap;
}

/** Labels of the watched values that changed since the snapshot. */
export function findTampering(snap) {
  return snap.filter(([, owner, name, value]) => owner[name] !== value).map(([label]) => `${label} was replaced`);
}
