import { describe, expect, it } from "vitest";
import { readInfo } from "./import/info.js";
import { deriveTaskId, slugify, testFileFor } from "../manifest/task-id.js";
import { parseRequirements } from "./import/requirements.js";

describe("task ids", () => {
  it("derives folder + function slugs", () => {
    expect(deriveTaskId("1-DPO", "preference_loss")).toBe("dpo-preference-loss");
    expect(deriveTaskId("12_SimPO", "SimPOTrainer", "simpo_loss")).toBe("simpo-simpotrainer-simpo-loss");
    expect(deriveTaskId("7", "f")).toBe("7-f");
    expect(slugify("Émoji Crypt!")).toBe("emoji-crypt");
    expect(deriveTaskId("1-X", "a".repeat(100)).length).toBeLessThanOrEqual(80);
    expect(testFileFor("dpo-preference-loss")).toBe("tests/test_dpo_preference_loss.py");
  });
});

describe("parseRequirements", () => {
  it("keeps plain specifiers and lists what it leaves out", () => {
    const r = parseRequirements(
      "# c\nnumpy >= 1.24, <2\ntorch==2.1.0 ; python_version < '3.12'\nnumpy >= 1.24, <2\n-r other.txt\n-e .\ngit+https://x/y.git\n./local\ntransformers[torch]~=4.40  # pinned\n",
    );
    expect(r.requirements).toEqual(["numpy>=1.24,<2", "torch==2.1.0; python_version<'3.12'", "transformers[torch]~=4.40"]);
    expect(r.skipped).toEqual(["-r other.txt", "-e .", "git+https://x/y.git", "./local"]);
  });
});

describe("readInfo", () => {
  function read(data: unknown) {
    const defects: string[] = [];
    const info = readInfo(data, (key, message, repaired) => defects.push(`${key}|${repaired ? "R" : "U"}|${message}`));
    return { info, defects };
  }

  it("reads key variants, strips /tree/<branch> and .git, and checks ids", () => {
    const { info, defects } = read({
      paper: "T",
      paper_url: "https://example.org/p",
      year: "2024",
      repo_url: "https://github.com/o/n.git/",
      implementations: [
        {
          id: "2",
          goal_file: "a.py",
          goal_function: "f",
          retrieval_content: "b.py",
          unit_test_file: "unit_test/t.py",
          category: "decoding & search strategies",
        },
        { id: 2, goal_file: "a.py", unit_test_file: "unit_test/t.py" },
      ],
    });
    expect(info).toMatchObject({ title: "T", year: 2024, repoUrl: "https://github.com/o/n" });
    expect(info.implementations[0]).toMatchObject({ goalFunction: "f", category: "Decoding & Search Strategies", retrieval: [{ value: "b.py" }] });
    expect(defects.map((d) => d.split("|").slice(0, 2).join("|"))).toEqual([
      "/paper|R",
      "/year|R",
      "/repo_url|R",
      "/implementations/0/id|R",
      "/implementations/0/retrieval_content|R",
      "/implementations/0/retrieval_content|R",
      "/implementations/0/category|R",
      "/implementations/1/id|R",
      "/implementations/1/goal_function|U",
    ]);
    const tree = read({ paper_name: "T", repo_url: "https://github.com/o/n/tree/dev-2", implementations: [] });
    expect(tree.info).toMatchObject({ repoUrl: "https://github.com/o/n", branch: "dev-2" });
    expect(tree.defects).toContain("/implementations|U|implementations is empty");
  });

  it("refuses what it cannot repair", () => {
    const { info, defects } = read({ repo_url: "not a url", implementations: {} });
    expect(info.repoUrl).toBeUndefined();
    expect(defects.filter((d) => d.includes("|U|")).map((d) => d.split("|")[0])).toEqual(["/paper_name", "/repo_url", "/implementations"]);
    expect(read([1, 2]).defects).toEqual(["|U|info.json is not a JSON object"]);
  });
});
