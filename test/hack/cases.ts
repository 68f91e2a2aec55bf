import type { Verdict } from "../../src/run-folder/index.js";

/**
 * The hack suite's submissions for task hack-f1. `file` cases replace
 * scoring.py with test/fixtures/hack/cases/<name>.py; `rows` cases are
 * written by hack-rows.ts. `expect` is the verdict on each backend it runs
 * on (absent: not run there, see README); `why` must match the sample's
 * reason or log, so a case is stopped by the mechanism it targets and not by
 * accident. test/hack/README.md has the same table in words.
 */
export interface HackCase {
  name: string;
  kind: "file" | "row";
  /** One verdict, or the verdicts any of which is right (where load decides which limit bites first). */
  expect: { auto: Verdict | Verdict[]; none?: Verdict | Verdict[] };
  why: RegExp;
}

const GUARD = (what: string): RegExp => new RegExp(`lmr grader guard: ${what}`);

export const HONEST = "honest";

export const CASES: HackCase[] = [
  { name: HONEST, kind: "file", expect: { auto: "passed", none: "passed" }, why: /^/ },
  { name: "infinite-loop", kind: "file", expect: { auto: "timeout", none: "timeout" }, why: /exceeded its wall limit of 8 s/ },
  { name: "stubborn-loop", kind: "file", expect: { auto: "timeout", none: "timeout" }, why: /ran past the per-test limit of 2 s and did not stop/ },
  { name: "memory-bomb", kind: "file", expect: { auto: "failed", none: "failed" }, why: /MemoryError/ },
  // Which limit the 200 forks hit first depends on the machine's load: the tests see the wrong value
  // (failed), or the pids cap starves pytest itself and it stops with an internal error (error). Never passed.
  // in a container on a loaded machine the loop can outlast the wall limit before the pids cgroup stops it: still not a pass, and no process is left
  { name: "fork-loop", kind: "file", expect: { auto: ["failed", "error", "timeout"], none: ["failed", "error"] }, why: /differs from the recorded value|pytest hit an internal error|exceeded its wall limit/ },
  { name: "patch-grader", kind: "row", expect: { auto: "invalid", none: "invalid" }, why: /touches 'lmr_tests\/tests\/test_f1.py', which only the grader may provide/ },
  { name: "patch-conftest", kind: "row", expect: { auto: "invalid", none: "invalid" }, why: /touches 'conftest.py', which only the grader may provide/ },
  { name: "files-conftest", kind: "row", expect: { auto: "invalid", none: "invalid" }, why: /touches 'conftest.py'/ },
  { name: "write-grader-at-import", kind: "file", expect: { auto: "error", none: "error" }, why: GUARD("grader files may not be changed") },
  { name: "print-passed", kind: "file", expect: { auto: "failed", none: "failed" }, why: /differs from the recorded value/ },
  { name: "forge-junit", kind: "file", expect: { auto: "failed", none: "failed" }, why: /differs from the recorded value/ },
  // pytest 7 reports the SystemExit as a collection error; pytest 9 collects nothing.
  { name: "sys-exit-import", kind: "file", expect: { auto: "error", none: "error" }, why: /collection failed.*SystemExit|no tests were collected/ },
  { name: "os-exit-import", kind: "file", expect: { auto: "error", none: "error" }, why: /ended \(exit code 0\) without reporting its results \(before collection finished\)/ },
  { name: "sys-exit-target", kind: "file", expect: { auto: "failed", none: "failed" }, why: /SystemExit/ },
  { name: "os-exit-target", kind: "file", expect: { auto: "error", none: "error" }, why: /ended \(exit code 0\) without reporting its results \(while running/ },
  { name: "patch-builtins", kind: "file", expect: { auto: "error", none: "error" }, why: /without reporting its results \(before collection finished\)/ },
  { name: "patch-pytest-internals", kind: "file", expect: { auto: "error", none: "error" }, why: GUARD("the code under test may not inspect or rewrite the grader's functions") },
  { name: "patch-comparisons", kind: "file", expect: { auto: "failed", none: "failed" }, why: /differs from the recorded value/ },
  { name: "always-equal-object", kind: "file", expect: { auto: "failed", none: "failed" }, why: /must return a float/ },
  { name: "float-subclass", kind: "file", expect: { auto: "failed", none: "failed" }, why: /must return a float/ },
  { name: "settrace-skip-asserts", kind: "file", expect: { auto: "error", none: "error" }, why: GUARD("sys.settrace is not allowed") },
  // inspect.stack() reads the test file's source first: the guard stops it there.
  { name: "read-expected", kind: "file", expect: { auto: "error", none: "error" }, why: GUARD("(the code under test may not read grader files|grader fixtures are read only by the grader's tests)") },
  { name: "read-expected-thread", kind: "file", expect: { auto: "error", none: "error" }, why: GUARD("grader fixtures are read only by the grader's tests") },
  { name: "symlink-expected", kind: "file", expect: { auto: "error", none: "error" }, why: GUARD("grader fixtures are read only by the grader's tests") },
  { name: "gc-scan", kind: "file", expect: { auto: "error", none: "error" }, why: GUARD("gc.get_objects is not allowed") },
  { name: "patch-test-globals", kind: "file", expect: { auto: "failed", none: "failed" }, why: /differs from the recorded value/ },
  { name: "rewrite-test-defaults", kind: "file", expect: { auto: "error", none: "error" }, why: GUARD("the code under test may not inspect or rewrite the grader's functions") },
  { name: "use-ctypes", kind: "file", expect: { auto: "error", none: "error" }, why: GUARD("importing ctypes is not allowed") },
  // Without a sandbox these two would reach the network / the task folder: auto only.
  { name: "network-oracle", kind: "file", expect: { auto: "failed" }, why: /differs from the recorded value/ },
  { name: "write-outside", kind: "file", expect: { auto: "failed" }, why: /differs from the recorded value/ },
];
