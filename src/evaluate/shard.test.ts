import { describe, expect, it } from "vitest";
import { LmrError } from "../core/errors.js";
import { hashPlan, parseShard, pickShard } from "./shard.js";

const keys = Array.from({ length: 400 }, (_, i) => ({ task_id: `t${i % 20}`, model: i % 3 ? "a" : "b/c", sample: String(Math.floor(i / 20)) }));

describe("shards", () => {
  it("parses I/N and refuses anything else with the fix", () => {
    expect(parseShard("2/4")).toEqual({ index: 2, count: 4 });
    for (const bad of ["0/2", "3/2", "1", "a/b", "1/0", "-1/2"]) expect(() => parseShard(bad)).toThrow(LmrError);
  });

  it("cuts the triples into N disjoint, complete, roughly even parts, the same every time", () => {
    for (const n of [1, 2, 3, 7]) {
      const parts = Array.from({ length: n }, (_, i) => keys.filter((k) => pickShard(k, n) === i + 1));
      expect(parts.reduce((a, p) => a + p.length, 0)).toBe(keys.length);
      for (const p of parts) expect(p.length).toBeGreaterThan(keys.length / n / 2);
      expect(keys.map((k) => pickShard(k, n))).toEqual(keys.map((k) => pickShard({ ...k }, n)));
    }
  });

  it("keeps a triple in its shard when other rows come and go", () => {
    const before = keys.map((k) => pickShard(k, 4));
    const more = [...keys, { task_id: "new", model: "a", sample: "0" }];
    expect(more.slice(0, keys.length).map((k) => pickShard(k, 4))).toEqual(before);
  });

  it("names a plan by its triples and grading keys, in any order", () => {
    const jobs = keys.slice(0, 10).map((key, i) => ({ key, gradingKey: `g${i}` }));
    expect(hashPlan([...jobs].reverse())).toBe(hashPlan(jobs));
    expect(hashPlan([{ ...jobs[0]!, gradingKey: "other" }, ...jobs.slice(1)])).not.toBe(hashPlan(jobs));
  });
});
