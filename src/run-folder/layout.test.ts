import { describe, expect, it } from "vitest";
import { computeGradingKey } from "./grading-key.js";
import { locateSample, nameModelFolder } from "./layout.js";

describe("nameModelFolder", () => {
  it("keeps a plain lower-case name and gives any other a slug plus a hash", () => {
    expect(nameModelFolder("model-a")).toBe("model-a");
    expect(nameModelFolder("gpt-4o-2024.08")).toBe("gpt-4o-2024.08");
    expect(nameModelFolder("openai/gpt-4o")).toMatch(/^openai-gpt-4o-[0-9a-f]{8}$/);
    expect(nameModelFolder("Qwen2.5-7B")).toMatch(/^qwen2\.5-7b-[0-9a-f]{8}$/);
    expect(nameModelFolder("../..")).toMatch(/^model-[0-9a-f]{8}$/);
    expect(nameModelFolder("")).toMatch(/^model-[0-9a-f]{8}$/);
  });

  it("never maps two names to one folder, even names that differ only by case", () => {
    const names = ["GPT", "gpt", "Gpt", "a/b", "a-b", "a b", "a_b", "x".repeat(80), `${"x".repeat(80)}y`];
    const folders = names.map(nameModelFolder);
    expect(new Set(folders.map((f) => f.toLowerCase())).size).toBe(names.length);
    for (const f of folders) expect(f).toMatch(/^[a-z0-9][a-z0-9._-]*$/);
  });

  it("places a sample under results/<model>/<task>/<sample>", () => {
    expect(locateSample({ task_id: "t", model: "m", sample: "0" })).toBe("results/m/t/0");
  });
});

describe("computeGradingKey", () => {
  it("changes with the model, so two models' results are never taken for each other", () => {
    const base = { model: "a", submissionHash: "h", bundleHashes: { task: "x" }, sandbox: "auto", python: "", toolkitVersion: "1" };
    expect(computeGradingKey(base)).toBe(computeGradingKey({ ...base }));
    expect(computeGradingKey({ ...base, model: "b" })).not.toBe(computeGradingKey(base));
    expect(computeGradingKey({ ...base, submissionHash: "g" })).not.toBe(computeGradingKey(base));
  });
});
