import { describe, expect, it } from "vitest";
import { isLmrError } from "../core/errors.js";
import { CATEGORIES } from "../manifest/types.js";
import {
  parseCategory,
  parseLineRef,
  parseMode,
  parseTaskId,
  parseUrl,
  parseYear,
  rankNearMatches,
  shortNameOf,
  slugify,
  suggestTaskId,
  TASK_ID_PATTERN,
} from "./choices.js";

function errorOf(fn: () => unknown): { message: string; hint?: string | undefined; kind: string } {
  try {
    fn();
  } catch (err) {
    if (isLmrError(err)) return { message: err.message, hint: err.hint, kind: err.kind };
    throw err;
  }
  throw new Error("expected an error");
}

describe("answers of lmr new", () => {
  it("parses years, URLs and modes, and names the flag when one is wrong", () => {
    expect(parseYear(" 2023 ")).toBe(2023);
    expect(errorOf(() => parseYear("23")).message).toMatch(/^--year: '23'/);
    expect(errorOf(() => parseYear("2300")).message).toMatch(/^--year/);
    expect(parseUrl("--paper-url", "https://arxiv.org/abs/2305.18290")).toBe("https://arxiv.org/abs/2305.18290");
    expect(errorOf(() => parseUrl("--paper-url", "arxiv.org/abs/1")).message).toMatch(/^--paper-url/);
    expect(parseMode("Region")).toBe("region");
    const mode = errorOf(() => parseMode("lines"));
    expect(mode.message).toMatch(/^--mode/);
    expect(mode.hint).toBe("choose one of: body, region, class");
    expect(mode.kind).toBe("usage");
  });

  it("takes a category by its name in any case or by a word that picks exactly one", () => {
    expect(parseCategory("decoding & search strategies")).toBe("Decoding & Search Strategies");
    expect(parseCategory("interpretab")).toBe("Interpretability & Explainability");
    const ambiguous = errorOf(() => parseCategory("ing"));
    expect(ambiguous.message).toMatch(/several/);
    expect(ambiguous.hint).toContain("Decoding & Search Strategies");
    const unknown = errorOf(() => parseCategory("robotics"));
    expect(unknown.message).toMatch(/^--category: 'robotics' is not a category/);
    for (const c of CATEGORIES) expect(unknown.hint).toContain(c);
  });

  it("accepts slugs as task ids and proposes a fixed one otherwise", () => {
    expect(parseTaskId("dpo-loss")).toBe("dpo-loss");
    const bad = errorOf(() => parseTaskId("DPO Loss!"));
    expect(bad.message).toMatch(/^--id/);
    expect(bad.hint).toBe("e.g. --id dpo-loss");
    expect(() => parseTaskId("a--b")).toThrow();
    expect(() => parseTaskId("x".repeat(81))).toThrow();
  });

  it("reads region bounds as line numbers or anchors", () => {
    expect(parseLineRef("--region-start", "12")).toEqual({ line: 12 });
    expect(parseLineRef("--region-start", " if cfg.ipo:")).toEqual({ anchor: "if cfg.ipo:" });
    expect(() => parseLineRef("--region-end", "0")).toThrow(/--region-end/);
    expect(() => parseLineRef("--region-end", "  ")).toThrow(/--region-end/);
  });
});

describe("suggested ids", () => {
  it("slugs names, splitting camel case and dots", () => {
    expect(slugify("Trainer.train_step")).toBe("trainer-train-step");
    expect(slugify("BagOfWordsPolicy")).toBe("bag-of-words-policy");
    expect(slugify("HTTPServer")).toBe("http-server");
    expect(slugify("Café au lait")).toBe("cafe-au-lait");
  });

  it("finds a paper's short name: the word before a colon, an acronym, or initials", () => {
    expect(shortNameOf("ROUGE: A Package for Automatic Evaluation of Summaries")).toBe("rouge");
    expect(shortNameOf("DoLa: Decoding by Contrasting Layers Improves Factuality")).toBe("dola");
    expect(shortNameOf("Direct Preference Optimization: Your Language Model is Secretly a Reward Model")).toBe("dpo");
    // the method's name, never the field's acronym (issue 27: "llm-muon-step" for Muon)
    expect(shortNameOf("Training LLMs with the GRPO objective")).toBe("grpo");
    expect(shortNameOf("Muon is Scalable for LLM Training")).toBe("muon");
    expect(shortNameOf("Attention Is All You Need")).toBe("attention");
  });

  it("joins short name and symbol into a valid id, without repeating the short name", () => {
    const id = suggestTaskId("Direct Preference Optimization: Your Language Model is Secretly a Reward Model", "preference_loss");
    expect(id).toBe("dpo-preference-loss");
    expect(suggestTaskId("DPO: x", "dpo_loss")).toBe("dpo-loss");
    expect(suggestTaskId("ROUGE: y", "Scorer.rouge_l")).toBe("rouge-scorer-rouge-l");
    expect(suggestTaskId("Muon is Scalable for LLM Training", "Muon.step")).toBe("muon-step");
    for (const t of ["", "   ", "Ω", "A: B"]) expect(suggestTaskId(t, "f")).toMatch(TASK_ID_PATTERN);
  });
});

describe("near matches", () => {
  it("ranks typos and containing names first, at most n", () => {
    const files = ["trainers.py", "train.py", "utils.py", "models.py", "data/prefs.py", "core/mcts.py"];
    expect(rankNearMatches("trainer.py", files, 2)).toEqual(["trainers.py", "train.py"]);
    expect(rankNearMatches("mcts.py", files, 1)).toEqual(["core/mcts.py"]);
    expect(rankNearMatches("x", files)).toHaveLength(5);
  });
});
