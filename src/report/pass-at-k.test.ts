import { describe, expect, it } from "vitest";
import { computePassAtK, computePassAtKs } from "./pass-at-k.js";

/** 1 − C(n−c,k)/C(n,k) with exact big integers: the definition, to check the product form against. */
function exactPassAtK(n: number, c: number, k: number): number {
  const choose = (a: number, b: number): bigint => {
    if (b < 0 || b > a) return 0n;
    let r = 1n;
    for (let i = 1; i <= b; i++) r = (r * BigInt(a - b + i)) / BigInt(i);
    return r;
  };
  const num = choose(n - c, k);
  const den = choose(n, k);
  // 1 − num/den, computed with 1e15 fixed-point so big binomials keep their precision
  const scaled = (num * 10n ** 15n) / den;
  return 1 - Number(scaled) / 1e15;
}

describe("computePassAtK", () => {
  it("matches hand-computed values", () => {
    // n=3, c=1: pass@1 = 1/3; pass@2 = 1 − C(2,2)/C(3,2) = 1 − 1/3; pass@3 = 1
    expect(computePassAtK(3, 1, 1)).toBeCloseTo(1 / 3, 12);
    expect(computePassAtK(3, 1, 2)).toBeCloseTo(2 / 3, 12);
    expect(computePassAtK(3, 1, 3)).toBe(1);
    // n=5, c=2, k=2: 1 − C(3,2)/C(5,2) = 1 − 3/10
    expect(computePassAtK(5, 2, 2)).toBeCloseTo(0.7, 12);
    // n=10, c=3, k=5: 1 − C(7,5)/C(10,5) = 1 − 21/252
    expect(computePassAtK(10, 3, 5)).toBeCloseTo(1 - 21 / 252, 12);
    // n=4, c=2, k=1 is the plain pass rate
    expect(computePassAtK(4, 2, 1)).toBeCloseTo(0.5, 12);
  });

  it("is 0 when nothing passed and 1 when fewer than k samples failed", () => {
    expect(computePassAtK(1, 0, 1)).toBe(0);
    expect(computePassAtK(10, 0, 10)).toBe(0);
    expect(computePassAtK(1, 1, 1)).toBe(1);
    expect(computePassAtK(10, 8, 3)).toBe(1); // n−c = 2 < 3
    expect(computePassAtK(10, 7, 3)).toBeLessThan(1); // n−c = 3, a draw of 3 can miss
  });

  it("agrees with the binomial definition, stays in [0,1] and grows with k and c", () => {
    for (const [n, c, k] of [
      [200, 10, 100],
      [100, 1, 1],
      [100, 1, 50],
      [50, 25, 10],
      [1000, 3, 500],
    ] as const) {
      expect(computePassAtK(n, c, k)).toBeCloseTo(exactPassAtK(n, c, k), 10);
    }
    for (let n = 1; n <= 12; n++) {
      for (let c = 0; c <= n; c++) {
        let prev = -1;
        for (let k = 1; k <= n; k++) {
          const v = computePassAtK(n, c, k);
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThanOrEqual(1);
          expect(v).toBeGreaterThanOrEqual(prev);
          expect(v).toBeCloseTo(exactPassAtK(n, c, k), 12);
          if (c < n) expect(computePassAtK(n, c + 1, k)).toBeGreaterThanOrEqual(v);
          prev = v;
        }
      }
    }
  });

  it("rejects arguments outside its domain", () => {
    expect(() => computePassAtK(0, 0, 1)).toThrow(RangeError);
    expect(() => computePassAtK(3, 4, 1)).toThrow(RangeError);
    expect(() => computePassAtK(3, -1, 1)).toThrow(RangeError);
    expect(() => computePassAtK(3, 1, 0)).toThrow(RangeError);
    expect(() => computePassAtK(3, 1, 4)).toThrow(RangeError);
    expect(() => computePassAtK(3.5, 1, 1)).toThrow(RangeError);
  });
});

describe("computePassAtKs", () => {
  it("lists k = 1..n and nothing for n = 0", () => {
    expect(computePassAtKs(0, 0)).toEqual([]);
    const ks = computePassAtKs(3, 1);
    expect(ks.map((p) => p.k)).toEqual([1, 2, 3]);
    expect(ks[2]?.value).toBe(1);
  });
});
