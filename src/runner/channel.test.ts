import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { readJunitTotals, RecordReader } from "./channel.js";

const KEY = "k".repeat(64);
function line(rec: Record<string, unknown>, key = KEY): string {
  const body = JSON.stringify(rec);
  return `${createHmac("sha256", key).update(body).digest("hex")} ${body}\n`;
}

describe("RecordReader", () => {
  it("accepts authenticated records split across chunks and tracks the running test", () => {
    const kinds: string[] = [];
    const r = new RecordReader(KEY, (k) => kinds.push(k));
    const text =
      line({ t: "hello", pid: 1, python: "3.11.7", executable: "/p", seq: 0 }) +
      line({ t: "collected", ids: ["a", "b"], seq: 1 }) +
      line({ t: "start", id: "a", seq: 2 });
    r.feed(Buffer.from(text.slice(0, 50)));
    r.feed(Buffer.from(text.slice(50)));
    expect(r.state.running).toBe("a");
    r.feed(line({ t: "result", id: "a", status: "passed", time_s: 0.1, message: null, raw_failed: false, seq: 3 }));
    r.end();
    expect(kinds).toEqual(["hello", "collected", "start", "result"]);
    expect(r.state.collected).toEqual(["a", "b"]);
    expect(r.state.results).toEqual([{ id: "a", status: "passed", time_s: 0.1, message: null, raw_failed: false }]);
    expect(r.state.running).toBeUndefined();
    expect(r.state.problems).toEqual([]);
  });

  it("flags a record signed with another key, and still reads the genuine ones", () => {
    const r = new RecordReader(KEY);
    r.feed(line({ t: "done", exit: 0, n_results: 2, tampered: [], seq: 0 }, "x".repeat(64)));
    r.feed(line({ t: "hello", pid: 1, python: "3", executable: "/p", seq: 0 }));
    expect(r.state.done).toBeUndefined();
    expect(r.state.hello?.pid).toBe(1);
    expect(r.state.problems[0]).toMatch(/unauthenticated record/);
  });

  it("flags sequence gaps, duplicate results, records after done and a cut-off last line", () => {
    const r = new RecordReader(KEY);
    const passed = { status: "passed", time_s: 0, message: null, raw_failed: false };
    r.feed(line({ t: "result", id: "a", ...passed, seq: 0 }));
    r.feed(line({ t: "result", id: "a", ...passed, seq: 2 }));
    r.feed(line({ t: "done", exit: 0, n_results: 1, tampered: [], seq: 3 }));
    r.feed(line({ t: "start", id: "b", seq: 4 }));
    r.feed("abc");
    r.end();
    expect(r.state.problems.join("\n")).toMatch(/out of sequence: expected 1, got 2/);
    expect(r.state.problems.join("\n")).toMatch(/two results for a/);
    expect(r.state.problems.join("\n")).toMatch(/record start after done/);
    expect(r.state.problems.join("\n")).toMatch(/ended in the middle of a record/);
  });

  it("believes nothing of a signed record that breaks the protocol (schema/harness-record.schema.json)", () => {
    const r = new RecordReader(KEY);
    r.feed(line({ t: "result", id: "a", status: "great", time_s: 0, message: null, raw_failed: false, seq: 0 }));
    r.feed(line({ t: "result", id: "b", status: "passed", time_s: 0, message: null, seq: 1 }));
    r.feed(line({ t: "done", exit: 0, n_results: 2, tampered: [], extra: 1, seq: 2 }));
    r.feed(line({ t: "shout", seq: 3 }));
    expect(r.state.results).toEqual([]);
    expect(r.state.done).toBeUndefined();
    const problems = r.state.problems.join("\n");
    expect(problems).toMatch(/harness protocol .*\/status must be equal to one of the allowed values/);
    expect(problems).toMatch(/harness protocol .* must have required property 'raw_failed'/);
    expect(problems).toMatch(/harness protocol .* must NOT have additional properties/);
    expect(problems).not.toMatch(/out of sequence/);
    expect(r.state.problems).toHaveLength(4);
  });
});

describe("readJunitTotals", () => {
  it("reads the testsuite counters", () => {
    const xml = '<?xml version="1.0"?><testsuites><testsuite name="pytest" errors="1" failures="2" skipped="3" tests="9" time="0.1"></testsuite></testsuites>';
    expect(readJunitTotals(xml)).toEqual({ tests: 9, failures: 2, errors: 1, skipped: 3 });
    expect(readJunitTotals("not xml")).toBeUndefined();
  });
});
