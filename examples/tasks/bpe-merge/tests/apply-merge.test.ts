// Grader tests for applyMerge (src/merge.ts): one merge step of BPE learning (Sennrich et al.,
// Algorithm 1) with the pair statistics updated in place.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { applyMerge, bestPair, countPairs, mergeSymbols } from "../../src/merge.js";
import { buildVocab, type VocabEntry } from "../../src/vocab.js";

interface Step { left: string; right: string; changed: number; words: string[]; stats: Record<string, number> }
interface Case { name: string; counts: Record<string, number>; steps: Step[] }
const RECORDED = JSON.parse(readFileSync(new URL("../fixtures/merge_steps.json", import.meta.url), "utf8")) as { cases: Case[] };

const sorted = (stats: ReadonlyMap<string, number>): [string, number][] => [...stats].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
const copy = (vocab: VocabEntry[]): VocabEntry[] => vocab.map((e) => ({ symbols: [...e.symbols], count: e.count }));

describe("recorded merge steps", () => {
  for (const c of RECORDED.cases) {
    test(`${c.name}: words, statistics and changed counts after each step`, () => {
      const vocab = buildVocab(c.counts);
      const stats = countPairs(vocab);
      for (const [i, step] of c.steps.entries()) {
        const changed = applyMerge(vocab, stats, step.left, step.right);
        assert.equal(changed, step.changed, `step ${i + 1} (${step.left} ${step.right}): changed`);
        assert.deepEqual(vocab.map((e) => e.symbols.join(" ")), step.words, `step ${i + 1}: words`);
        assert.deepEqual(sorted(stats), Object.entries(step.stats).sort(([a], [b]) => (a < b ? -1 : 1)), `step ${i + 1}: statistics`);
      }
    });
  }
});

describe("properties", () => {
  test("the statistics after every step equal a recount of the merged vocabulary", () => {
    const vocab = buildVocab({ hug: 10, pug: 5, pun: 12, bun: 4, hugs: 5, ugh: 3, gugu: 2 });
    const stats = countPairs(vocab);
    for (let i = 0; i < 10; i++) {
      const best = bestPair(stats);
      if (!best) break;
      applyMerge(vocab, stats, ...best.pair);
      assert.deepEqual(sorted(stats), sorted(countPairs(vocab)), `after merge ${i + 1} of ${best.pair.join(" ")}`);
      for (const [key, n] of stats) assert.ok(n > 0, `pair ${key} is kept with count ${n}`);
    }
  });

  test("it returns how many words changed and merges every word that has the pair", () => {
    const vocab = buildVocab({ abc: 2, bcd: 3, cab: 1, bbbb: 1, xyz: 7 });
    const expected = copy(vocab).map((e) => ({ ...e, symbols: mergeSymbols(e.symbols, "b", "c") }));
    const changedWords = vocab.filter((e, i) => e.symbols.join(" ") !== expected[i]!.symbols.join(" ")).length;
    const stats = countPairs(vocab);
    assert.equal(applyMerge(vocab, stats, "b", "c"), changedWords);
    assert.deepEqual(vocab, expected);
  });

  test("occurrences are merged left to right without overlap, weighted by word counts", () => {
    const vocab: VocabEntry[] = [{ symbols: ["a", "a", "a", "b"], count: 2 }, { symbols: ["a", "a", "a", "a"], count: 3 }];
    const stats = countPairs(vocab);
    assert.equal(applyMerge(vocab, stats, "a", "a"), 2);
    assert.deepEqual(vocab.map((e) => e.symbols), [["aa", "a", "b"], ["aa", "aa"]]);
    assert.deepEqual(sorted(stats), [["a b", 2], ["aa a", 2], ["aa aa", 3]]);
  });

  test("the same Map and the same entries are updated in place; counts stay", () => {
    const vocab = buildVocab({ low: 5, lowest: 2 });
    const entries = [...vocab];
    const stats = countPairs(vocab);
    const before = new Map(stats);
    applyMerge(vocab, stats, "l", "o");
    assert.ok(vocab.every((e, i) => e === entries[i]), "entries are the same objects");
    assert.deepEqual(vocab.map((e) => e.count), [5, 2]);
    assert.equal(stats.get("l o"), undefined);
    assert.equal(stats.get("lo w</w>"), 5);
    assert.equal(stats.get("lo w"), 2);
    assert.equal(stats.get("w e"), before.get("w e"));
  });

  test("a pair that occurs nowhere changes nothing and returns 0", () => {
    const vocab = buildVocab({ low: 5, new: 2 });
    const stats = countPairs(vocab);
    const words = vocab.map((e) => e.symbols.join(" "));
    const before = sorted(stats);
    assert.equal(applyMerge(vocab, stats, "z", "q"), 0);
    assert.equal(applyMerge(vocab, stats, "w</w>", "l"), 0);
    assert.deepEqual(vocab.map((e) => e.symbols.join(" ")), words);
    assert.deepEqual(sorted(stats), before);
  });

  test("symbols that only look alike are not merged: the pair must be adjacent and exact", () => {
    const vocab: VocabEntry[] = [{ symbols: ["e", "s", "t</w>"], count: 1 }, { symbols: ["es", "t</w>"], count: 4 }, { symbols: ["e", "x", "s"], count: 2 }];
    const stats = countPairs(vocab);
    assert.equal(applyMerge(vocab, stats, "e", "s"), 1);
    assert.deepEqual(vocab.map((e) => e.symbols), [["es", "t</w>"], ["es", "t</w>"], ["e", "x", "s"]]);
    assert.equal(stats.get("es t</w>"), 5);
    assert.equal(stats.get("e s"), undefined);
  });
});
