import type { Verdict } from "../../src/run-folder/index.js";

/**
 * The adversarial suite's submissions for task hack-f1 (f1_score, f1_table, f1_tensor). `file`
 * cases replace scoring.py with test/fixtures/hack/cases/<name>.py; `rows` cases are written by
 * hack-rows.ts. `expect` is the verdict (or the verdicts any of which is right, where the
 * machine's load decides which limit bites first); `why` must match the sample's reason or log,
 * so a case is stopped by the mechanism it targets and not by accident. `split`: the case is
 * defeated by the process split alone, so it also runs with --sandbox none (a plain process that
 * sees the host), where the cases that read or write the host would succeed by design.
 * test/hack/README.md has the same table in words.
 */
export interface HackCase {
  name: string;
  kind: "file" | "row";
  class: AttackClass;
  expect: Verdict | Verdict[];
  why: RegExp;
  split?: boolean;
}

/** The classes of attack the trust-boundary issue names (and two more). */
type AttackClass = "forge" | "skip" | "lie" | "host" | "resources" | "crash" | "grader-files";

export const HONEST = "honest";
const WRONG = /differs from the recorded value|must return a float|must return a float64/;
const CRASH = /the candidate process ended while it ran|the connection to the candidate broke while it ran/;
const REFUSED = (type: string): RegExp => new RegExp(`has type [\\w.]*${type}, which cannot cross to the oracle`);

export const CASES: HackCase[] = [
  { name: HONEST, kind: "file", class: "lie", expect: "passed", why: /^/, split: true },
  // verdicts forged from inside the process that runs the code: it is not the tests' process
  {
    name: "forge-records",
    kind: "file",
    class: "forge",
    expect: "failed",
    why: /not a bridge frame|answered out of turn|differs from the recorded value/,
    split: true,
  },
  {
    name: "patch-serializers",
    kind: "file",
    class: "forge",
    expect: "failed",
    why: /neither a value nor an error|not a bridge frame|answered out of turn|differs from the recorded value/,
    split: true,
  },
  { name: "gc-channel", kind: "file", class: "forge", expect: "failed", why: WRONG, split: true },
  { name: "pytest-plugin", kind: "file", class: "forge", expect: "failed", why: WRONG, split: true },
  { name: "print-passed", kind: "file", class: "forge", expect: "failed", why: WRONG, split: true },
  {
    name: "crafted-frames",
    kind: "file",
    class: "forge",
    expect: "failed",
    why: /answered out of turn|not a bridge frame|does not accept|is not a torch dtype|nested too deeply|JSON does not parse/,
    split: true,
  },
  { name: "write-tree-conftest", kind: "file", class: "forge", expect: "failed", why: WRONG, split: true },
  { name: "kill-everything", kind: "file", class: "forge", expect: "failed", why: /the candidate process is gone|differs from the recorded value/ },
  // skipping what it would fail: the import is the candidate's, the graded set is the verified one
  { name: "skip-module-level", kind: "file", class: "skip", expect: "error", why: /could not be imported.*Skipped/s, split: true },
  { name: "skip-in-target", kind: "file", class: "skip", expect: "failed", why: /Skipped: not today|SkipTest: not today/, split: true },
  { name: "sys-exit-import", kind: "file", class: "skip", expect: "error", why: /could not be imported.*SystemExit/s, split: true },
  // lying return values: nothing but data crosses, decoded to exact types
  { name: "float-subclass", kind: "file", class: "lie", expect: "failed", why: REFUSED("_Agreeable"), split: true },
  { name: "always-equal-object", kind: "file", class: "lie", expect: "failed", why: /must return a float/, split: true },
  { name: "ndarray-subclass", kind: "file", class: "lie", expect: "failed", why: REFUSED("_Yes"), split: true },
  { name: "tensor-subclass", kind: "file", class: "lie", expect: "failed", why: REFUSED("_Agree"), split: true },
  // the answer read from the host: the candidate's sandbox binds nothing of it
  { name: "read-host-answers", kind: "file", class: "host", expect: "failed", why: WRONG },
  { name: "read-scratch-grader", kind: "file", class: "host", expect: "failed", why: WRONG },
  { name: "network-oracle", kind: "file", class: "host", expect: "failed", why: WRONG },
  { name: "write-outside", kind: "file", class: "host", expect: "failed", why: WRONG },
  // resources: capped tmpfs, a disk quota, memory, processes, time
  { name: "tmp-fill", kind: "file", class: "resources", expect: "failed", why: WRONG },
  { name: "tree-fill", kind: "file", class: "resources", expect: "failed", why: WRONG },
  { name: "memory-bomb", kind: "file", class: "resources", expect: "failed", why: /differs from the recorded value|candidate process ended/ },
  {
    name: "fork-loop",
    kind: "file",
    class: "resources",
    expect: ["failed", "error", "timeout"],
    why: /differs from the recorded value|candidate|exceeded its wall limit/,
  },
  { name: "infinite-loop", kind: "file", class: "resources", expect: ["timeout", "failed"], why: /exceeded its wall limit of 40 s|per-test limit/ },
  { name: "stubborn-loop", kind: "file", class: "resources", expect: ["timeout", "failed"], why: /exceeded its wall limit of 40 s|per-test limit/ },
  // crashes are the test's failure, never a pass
  { name: "os-exit-target", kind: "file", class: "crash", expect: "failed", why: CRASH, split: true },
  { name: "os-exit-import", kind: "file", class: "crash", expect: "failed", why: CRASH, split: true },
  // grader files from a submission
  {
    name: "patch-grader",
    kind: "row",
    class: "grader-files",
    expect: "invalid",
    why: /touches 'lmr_tests\/tests\/test_f1.py', which only the grader may provide/,
    split: true,
  },
  {
    name: "patch-conftest",
    kind: "row",
    class: "grader-files",
    expect: "invalid",
    why: /touches 'conftest.py', which only the grader may provide/,
    split: true,
  },
  { name: "files-conftest", kind: "row", class: "grader-files", expect: "invalid", why: /touches 'conftest.py'/, split: true },
];
