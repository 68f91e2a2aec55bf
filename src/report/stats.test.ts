import { describe, expect, it } from "vitest";
import { agreementOf, bootstrapMeanInterval } from "./stats.js";

const pairs = (spec: [boolean, boolean, number][]) => spec.flatMap(([tests, judge, n]) => Array.from({ length: n }, () => ({ tests, judge })));

describe("Cohen's kappa of tests against the judge", () => {
  it("matches a hand computation", () => {
    // a=20 both pass, b=5 tests only, c=10 judge only, d=15 both fail: po = 0.7, pe = (25*30 + 25*20)/2500 = 0.5
    const r = agreementOf(
      pairs([
        [true, true, 20],
        [true, false, 5],
        [false, true, 10],
        [false, false, 15],
      ]),
    );
    expect(r).toMatchObject({ samples: 50, both_pass: 20, tests_only: 5, judge_only: 10, both_fail: 15, observed: 0.7 });
    expect(r.kappa).toBeCloseTo(0.4, 6);
  });
  it("is 1 for full agreement, negative below chance, null when chance agreement is certain", () => {
    expect(
      agreementOf(
        pairs([
          [true, true, 3],
          [false, false, 2],
        ]),
      ).kappa,
    ).toBe(1);
    expect(
      agreementOf(
        pairs([
          [true, false, 3],
          [false, true, 3],
        ]),
      ).kappa,
    ).toBe(-1);
    expect(agreementOf(pairs([[true, true, 4]]))).toMatchObject({ observed: 1, kappa: null });
    expect(agreementOf([])).toMatchObject({ samples: 0, kappa: null, observed: null });
  });
});

describe("bootstrap interval", () => {
  it("is reproducible, brackets the mean, and narrows with more tasks", () => {
    const few = [1, 0, 1, 0.5, 0];
    const a = bootstrapMeanInterval(few)!;
    expect(bootstrapMeanInterval(few)).toEqual(a);
    expect(a.low).toBeLessThanOrEqual(0.5);
    expect(a.high).toBeGreaterThanOrEqual(0.5);
    expect(a).toMatchObject({ level: 0.95, resamples: 2000 });
    const many = Array.from({ length: 200 }, (_, i) => [1, 0, 1, 0.5, 0][i % 5]!);
    const b = bootstrapMeanInterval(many)!;
    expect(b.high - b.low).toBeLessThan((a.high - a.low) / 3);
    expect(bootstrapMeanInterval([0.25, 0.25])).toMatchObject({ low: 0.25, high: 0.25 });
    expect(bootstrapMeanInterval([])).toBeNull();
    // another seed, another (close) interval
    expect(bootstrapMeanInterval(few, { seed: 7 })).not.toEqual(a);
  });
});
