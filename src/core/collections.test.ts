import { describe, expect, it } from "vitest";
import { groupBy } from "./collections.js";

describe("groupBy", () => {
  it("groups by key, keys and members in first-seen order", () => {
    const g = groupBy(["b1", "a1", "b2", "c1", "a2"], (s) => s[0]!);
    expect([...g.keys()]).toEqual(["b", "a", "c"]);
    expect(g.get("a")).toEqual(["a1", "a2"]);
    expect(g.get("b")).toEqual(["b1", "b2"]);
  });
  it("gives an empty map for no items", () => {
    expect(groupBy([], (x: number) => x).size).toBe(0);
  });
});
