import { describe, expect, it } from "vitest";
import { PythonMasker } from "../mask/python/masker.js";
import { factsOf, parseParams, pickSearchTerms, selectPassages, summarizeDocstring, symbolWords } from "./instruction-context.js";
import { buildInstructionData, renderInstruction } from "./instruction.js";
import { guessContextFiles, placeholderTestPath } from "./task-skeleton.js";

const SOURCE = `import math
from utils import clip
from .helpers import scale
import pkg.sub as sub


class Scorer:
    """Scores pairs."""

    def __init__(self, beta: float = 0.1):
        self.beta = beta

    def score(self, a, b, *, margin: float = 1.0, names=("x", "y, z")) -> float:
        '''Margin score of a over b.

        Longer explanation that is not part of the summary.
        '''
        return clip(a - b + margin)


def kl_penalty(logp, ref_logp, /, coef=0.05, *rest, **kw):
    r"""KL penalty
    between two policies."""
    return coef * (logp - ref_logp)
`;

describe("facts about targets", () => {
  it("summarises docstrings to their first paragraph on one line", () => {
    expect(summarizeDocstring(`'''Margin score.\n\n    More.\n    '''`)).toBe("Margin score.");
    expect(summarizeDocstring(`r"""KL penalty\n    between two policies."""`)).toBe("KL penalty between two policies.");
    expect(summarizeDocstring(`"one line"`)).toBe("one line");
  });

  it("parses parameters: defaults, keyword-only and variadic ones, no self", () => {
    expect(parseParams(`def score(self, a, b, *, margin: float = 1.0, names=("x", "y, z")) -> float:`)).toEqual([
      { name: "a", hasDefault: false },
      { name: "b", hasDefault: false },
      { name: "margin", hasDefault: true },
      { name: "names", hasDefault: true },
    ]);
    expect(parseParams("def f(logp, ref_logp, /, coef=0.05, *rest, **kw):").map((p) => p.name)).toEqual(["logp", "ref_logp", "coef", "rest", "kw"]);
    expect(parseParams("def f(x: dict[str, int] = {}, y: int == 2):")).toEqual([
      { name: "x", hasDefault: true },
      { name: "y", hasDefault: true },
    ]);
  });

  it("describes a class with its own methods and a function with its parameters", async () => {
    const symbols = await new PythonMasker().listSymbols(SOURCE);
    const cls = factsOf(
      { file: "m.py", symbol: "Scorer", mode: "class" },
      symbols.find((s) => s.name === "Scorer")!,
      symbols,
    );
    expect(cls.kind).toBe("class");
    expect(cls.methods.map((m) => m.name)).toEqual(["__init__", "score"]);
    expect(cls.summary).toBe("Scores pairs.");
    const fn = factsOf(
      { file: "m.py", symbol: "kl_penalty", mode: "body" },
      symbols.find((s) => s.name === "kl_penalty")!,
      symbols,
    );
    expect(fn.params.filter((p) => p.hasDefault).map((p) => p.name)).toEqual(["coef"]);
    expect(fn.signature).toMatch(/^def kl_penalty\(/);
  });
});

describe("paper passages", () => {
  const pages = {
    "1": "1 Introduction\nWe study preference learning.\nThe KL penalty keeps the policy close.",
    "2": "3 Method\nThe penalty is\nKL(p || q) = sum p log p/q (4)\nwhere the KL\npenalty uses a coefficient.",
    "3": "Appendix\nUnrelated text about penalty terms.",
  };

  it("searches the author's keywords, the symbol's words and docstring words", () => {
    expect(symbolWords("Scorer.kl_penaltyTerm")).toBe("scorer kl penalty term");
    const terms = pickSearchTerms(
      [
        {
          file: "m.py",
          symbol: "kl_penalty",
          mode: "body",
          kind: "function",
          line: 1,
          signature: "",
          summary: "KL penalty between two policies.",
          params: [],
          methods: [],
        },
      ],
      ["coefficient"],
    );
    expect(terms.slice(0, 3)).toEqual(["coefficient", "kl penalty", "penalty"]);
    expect(terms).toContain("policies");
    expect(new Set(terms.map((t) => t.toLowerCase())).size).toBe(terms.length);
  });

  it("prefers whole names and passages near equations, one per line, in reading order", () => {
    const found = selectPassages(pages, ["kl penalty", "penalty"], [], 2);
    expect(found.map((f) => [f.page, f.line])).toEqual([
      [1, 3],
      [2, 4],
    ]);
    expect(found[1]!.equations).toEqual(["4"]);
    expect(found[1]!.heading).toBe("3 Method");
  });

  it("spreads citations over the keywords, each on its own page, instead of filling the first keyword's page", () => {
    // issue 27: six citations all landed on the first keyword's page
    const paper = {
      // the first keyword's page has a heading and equations, so every line of it ranks first
      "1": "1 Method\n" + Array.from({ length: 8 }, (_, i) => `Line ${i} on momentum and more momentum.      (${i + 1})`).join("\n"),
      "2": "The Newton-Schulz iteration orthogonalizes the update.",
      "3": "We match the update RMS of AdamW by a shape factor.",
      "4": "Decoupled weight decay keeps the weights bounded.",
    };
    const keywords = ["momentum", "Newton-Schulz", "update RMS", "weight decay"];
    const found = selectPassages(paper, keywords, keywords, 6);
    expect(new Set(found.map((f) => f.term))).toEqual(new Set(keywords));
    expect(found.filter((f) => f.term !== "momentum").map((f) => [f.term, f.page])).toEqual([
      ["Newton-Schulz", 2],
      ["update RMS", 3],
      ["weight decay", 4],
    ]);
    expect(found).toHaveLength(6);
    expect(found.filter((f) => f.page === 1)).toHaveLength(3);
  });
});

describe("instruction text", () => {
  it("renders every section for a body target with paper passages and no TODO left unexplained", async () => {
    const symbols = await new PythonMasker().listSymbols(SOURCE);
    const facts = [
      factsOf(
        { file: "m.py", symbol: "kl_penalty", mode: "body" },
        symbols.find((s) => s.name === "kl_penalty")!,
        symbols,
      ),
    ];
    const manifest = {
      id: "x-kl-penalty",
      paper: { title: "A Paper", url: "https://example.org/p", year: 2024, text: "paper.json" },
      tests: { files: ["tests/test_a.py", "tests/test_b.py"], timeout_per_test_s: 20, timeout_total_s: 90 },
      context_files: ["utils.py"],
    };
    const text = await renderInstruction({ manifest, facts, pages: { "2": "3 Method\nThe KL penalty is (4)" } });
    for (const heading of [
      "# Implement `kl_penalty`",
      "## What to implement",
      "## Where to look in the paper",
      "## Files that help",
      "## Out of scope",
      "## How your work is checked",
    ]) {
      expect(text).toContain(heading);
    }
    expect(text).toContain("The paper is at the root of this workspace: `paper.md` holds its text, page by page.");
    expect(text).toContain('page 2, section "3 Method", near equation (4): "The KL penalty is (4)"');
    expect(text).toContain("- `utils.py`");
    expect(text).toContain("the\n  parameters with defaults are `coef`");
    expect(text).toContain("Hidden pytest tests (2 files) exercise `kl_penalty`");
    expect(text).toContain("at most 20 s and the whole run for 90 s");
    expect(text).not.toMatch(/\{\{|\}\}/);
    expect(text).not.toMatch(/\n{3,}/);
    expect(text.endsWith("\n")).toBe(true);
  });

  it("says when there is no paper text, and lists a class's methods", async () => {
    const symbols = await new PythonMasker().listSymbols(SOURCE);
    const facts = [
      factsOf(
        { file: "m.py", symbol: "Scorer", mode: "class" },
        symbols.find((s) => s.name === "Scorer")!,
        symbols,
      ),
    ];
    const data = buildInstructionData({
      manifest: { id: "s", paper: { title: "T", url: "https://e.org", year: 2020 }, tests: { files: ["t.py"], timeout_per_test_s: 1, timeout_total_s: 2 } },
      facts,
    });
    expect(data.paper_searched).toBe(false);
    expect(data.has_passages).toBe(false);
    const text = await renderInstruction({
      manifest: { id: "s", paper: { title: "T", url: "https://e.org", year: 2020 }, tests: { files: ["t.py"], timeout_per_test_s: 1, timeout_total_s: 2 } },
      facts,
    });
    expect(text).toContain("Every method body of this class has been removed");
    expect(text).toContain('- `def score(self, a, b, *, margin: float = 1.0, names=("x", "y, z")) -> float:`');
    expect(text).toContain("no paper text was available");
    expect(text).not.toContain("paper.json");
  });
});

describe("new task files", () => {
  it("names the placeholder test after the symbol", () => {
    expect(placeholderTestPath("Trainer.train_step")).toBe("tests/test_trainer_train_step.py");
    expect(placeholderTestPath("BagOfWords")).toBe("tests/test_bag_of_words.py");
  });

  it("guesses context files from the target file's imports of the upstream's own modules", () => {
    const files = ["pkg/scoring.py", "pkg/helpers.py", "utils.py", "pkg/sub/__init__.py", "other.py"];
    expect(guessContextFiles("pkg/scoring.py", SOURCE, files)).toEqual(["utils.py", "pkg/helpers.py", "pkg/sub/__init__.py"]);
    expect(guessContextFiles("a.py", "import os, other\nfrom . import utils\n", ["a.py", "other.py", "utils.py"])).toEqual(["other.py", "utils.py"]);
  });
});
