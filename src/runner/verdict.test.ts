import { describe, expect, it } from "vitest";
import type { ChannelState, HarnessResult } from "./channel.js";
import { decideVerdict, type ProcessFacts } from "./verdict.js";

const res = (id: string, status: HarnessResult["status"], raw_failed = status === "failed" || status === "error"): HarnessResult => ({
  id,
  status,
  time_s: 0.01,
  message: status === "passed" ? null : "boom",
  raw_failed,
});

function channel(over: Partial<ChannelState> = {}): ChannelState {
  const results = over.results ?? [res("a", "passed"), res("b", "passed")];
  const rawFailed = results.some((r) => r.raw_failed);
  return {
    hello: { pid: 1, python: "3.11.7", executable: "/p" },
    collectErrors: [],
    collected: ["a", "b"],
    results,
    done: { exit: rawFailed ? 1 : 0, n_results: results.length, tampered: [] },
    problems: [],
    ...over,
  };
}
const facts = (over: Partial<ProcessFacts> = {}): ProcessFacts => ({ exitCode: 0, signal: null, graderModified: [], stderrTail: "", ...over });

describe("decideVerdict", () => {
  it("passes only a complete, consistent, all-passed run", () => {
    expect(decideVerdict(channel(), facts())).toMatchObject({ status: "passed", counts: { passed: 2, failed: 0, errors: 0, skipped: 0 } });
  });

  it("fails on a failed or errored test", () => {
    const ch = channel({ results: [res("a", "passed"), res("b", "failed")] });
    expect(decideVerdict(ch, facts({ exitCode: 1 })).status).toBe("failed");
    const er = channel({ results: [res("a", "error"), res("b", "passed")] });
    expect(decideVerdict(er, facts({ exitCode: 1 })).status).toBe("failed");
  });

  it("fails a test the harness marked failed although pytest counted it a skip (exit 0)", () => {
    const ch = channel({ results: [res("a", "passed"), res("b", "failed", false)] });
    expect(decideVerdict(ch, facts({ exitCode: 0 })).status).toBe("failed");
  });

  it("errors on collection errors, zero tests, all skipped", () => {
    expect(
      decideVerdict(
        channel({ collectErrors: [{ id: "t.py", message: "E   ImportError: x" }], collected: [], results: [], done: { exit: 2, n_results: 0, tampered: [] } }),
        facts({ exitCode: 2 }),
      ),
    ).toMatchObject({ status: "error", reason: expect.stringMatching(/collection failed.*ImportError/) });
    expect(decideVerdict(channel({ collected: [], results: [], done: { exit: 5, n_results: 0, tampered: [] } }), facts({ exitCode: 5 })).reason).toMatch(
      /no tests were collected/,
    );
    expect(decideVerdict(channel({ results: [res("a", "skipped"), res("b", "skipped")] }), facts()).reason).toMatch(/no test passed/);
  });

  it("errors when the process exits 0 without the done record", () => {
    const v = decideVerdict(channel({ done: undefined, collected: undefined, results: [] }), facts({ exitCode: 0 }));
    expect(v).toMatchObject({ status: "error", reason: expect.stringMatching(/exit code 0.*without reporting/) });
  });

  it("errors when results are missing or the exit code disagrees", () => {
    expect(decideVerdict(channel({ results: [res("a", "passed")], done: { exit: 0, n_results: 1, tampered: [] } }), facts()).reason).toMatch(
      /1 of 2 collected.*no result for b/,
    );
    expect(decideVerdict(channel(), facts({ exitCode: 1 })).reason).toMatch(/disagrees/);
    expect(decideVerdict(channel({ done: { exit: 1, n_results: 2, tampered: [] } }), facts({ exitCode: 1 })).reason).toMatch(/exit status 1 disagrees/);
    expect(decideVerdict(channel({ junit: '<testsuite errors="0" failures="1" tests="2">' }), facts()).reason).toMatch(/JUnit totals/);
  });

  it("errors on an untrusted channel, tampering or modified grader files, even when all passed", () => {
    expect(decideVerdict(channel({ problems: ["unauthenticated record"] }), facts()).status).toBe("error");
    expect(decideVerdict(channel({ done: { exit: 0, n_results: 2, tampered: ["os._exit"] } }), facts()).reason).toMatch(/tampered.*os\._exit/);
    expect(decideVerdict(channel(), facts({ graderModified: ["lmr_tests/fixtures/x.json"] })).reason).toMatch(/modified.*x\.json/);
  });

  it("times out on the wall limit or a killed test, whatever was reported", () => {
    expect(decideVerdict(channel(), facts({ wallTimeoutS: 3, signal: "SIGKILL", exitCode: null })).status).toBe("timeout");
    expect(decideVerdict(channel({ running: "b" }), facts({ perTestKilled: { id: "b", limitS: 1 } })).reason).toMatch(
      /test b ran past the per-test limit of 1 s/,
    );
  });

  it("calls a process that never reached the harness, or a harness without pytest, infra", () => {
    expect(decideVerdict(channel({ hello: undefined }), facts({ exitCode: 1, stderrTail: "bwrap: execvp python: No such file" }))).toMatchObject({
      status: "infra",
      reason: expect.stringMatching(/never started.*No such file/),
    });
    expect(decideVerdict(channel({ infra: "pytest is not importable" }), facts({ exitCode: 3 })).status).toBe("infra");
    expect(decideVerdict(channel(), facts({ spawnError: "cannot start /bin/sh" })).status).toBe("infra");
  });
});
