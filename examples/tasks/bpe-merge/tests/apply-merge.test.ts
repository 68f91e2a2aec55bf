// Grader tests for applyMerge (src/merge.ts): one merge step of BPE learning (Sennrich et al.,
// Algorithm 1) with the pair statistics updated in place.
//
// The code under test runs in the candidate process (@lmr/bridge): each probe below builds a
// vocabulary there, applies merges, and returns plain data. What the tests expect is computed
// here, with the small BPE helpers written below, never by the candidate.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { probe } from "@lmr/bridge";

interface Step { left: string; right: string; changed: number; words: string[]; stats: Record<string, number> }
interface Case { name: string; counts: Record<string, number>; steps: Step[] }
interface Entry { symbols: string[]; count: number }
const RECORDED = JSON.parse(readFileSync(new URL("../fixtures/merge_steps.json", import.meta.url), "utf8")) as { cases: Case[] };

// ---------------------------------------------------------------- the oracle's own BPE helpers

const split = (word: string): string[] => {
  const chars = Array.from(word);
  chars[chars.length - 1] = `${chars[chars.length - 1]}</w>`;
  return chars;
};
const vocabOf = (counts: Record<string, number>): Entry[] => Object.entries(counts).map(([w, count]) => ({ symbols: split(w), count }));
const recount = (vocab: Entry[]): [string, number][] => {
  const stats = new Map<string, number>();
  for (const { symbols, count } of vocab) for (let i = 0; i + 1 < symbols.length; i++) stats.set(`${symbols[i]} ${symbols[i + 1]}`, (stats.get(`${symbols[i]} ${symbols[i + 1]}`) ?? 0) + count);
  return sorted(stats);
};
const mergeWord = (symbols: string[], left: string, right: string): string[] => {
  const out: string[] = [];
  for (let i = 0; i < symbols.length; ) {
    if (i + 1 < symbols.length && symbols[i] === left && symbols[i + 1] === right) {
      out.push(left + right);
      i += 2;
    } else out.push(symbols[i++]!);
  }
  return out;
};
const sorted = (stats: ReadonlyMap<string, number> | [string, number][]): [string, number][] =>
  [...stats].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

// ---------------------------------------------------------------- probes (run in the candidate)

/** Builds the vocabulary from `counts` (or takes `vocab` as given), counts its pairs, then applies each merge. */
const merges = probe(async function merges(start: { counts?: Record<string, number>; vocab?: Entry[] }, steps: [string, string][]) {
  const { buildVocab } = await lmr.load("src/vocab.ts");
  const { applyMerge, countPairs } = await lmr.load("src/merge.ts");
  const vocab = start.vocab ?? buildVocab(start.counts);
  const entries = [...vocab];
  const stats = countPairs(vocab);
  const sameMap = stats;
  const out = [];
  for (const [left, right] of steps) {
    const changed = applyMerge(vocab, stats, left, right);
    out.push({ changed, words: vocab.map((e: Entry) => e.symbols.join(" ")), symbols: vocab.map((e: Entry) => [...e.symbols]), counts: vocab.map((e: Entry) => e.count), stats: [...stats] });
  }
  return { steps: out, sameEntries: vocab.length === entries.length && vocab.every((e: Entry, i: number) => e === entries[i]), sameMap: sameMap === stats };
});

/** Learns `n` merges greedily (the most frequent pair, ties to the smallest key), applying each with applyMerge. */
const learned = probe(async function learned(counts: Record<string, number>, n: number) {
  const { buildVocab } = await lmr.load("src/vocab.ts");
  const { applyMerge, countPairs } = await lmr.load("src/merge.ts");
  const vocab = buildVocab(counts);
  const stats = countPairs(vocab);
  const out = [];
  for (let i = 0; i < n; i++) {
    let best: string | undefined;
    let bestCount = 0;
    for (const [key, count] of stats) if (count > bestCount || (count === bestCount && best !== undefined && key < best)) [best, bestCount] = [key, count];
    if (best === undefined) break;
    const at = best.indexOf(" ");
    const pair = [best.slice(0, at), best.slice(at + 1)];
    applyMerge(vocab, stats, pair[0], pair[1]);
    out.push({ pair, vocab: vocab.map((e: Entry) => ({ symbols: [...e.symbols], count: e.count })), stats: [...stats] });
  }
  return out;
});

describe("recorded merge steps", () => {
  for (const c of RECORDED.cases) {
    test(`${c.name}: words, statistics and changed counts after each step`, async () => {
      const got = await merges({ counts: c.counts }, c.steps.map((s) => [s.left, s.right]));
      for (const [i, step] of c.steps.entries()) {
        const g = got.steps[i];
        assert.equal(g.changed, step.changed, `step ${i + 1} (${step.left} ${step.right}): changed`);
        assert.deepEqual(g.words, step.words, `step ${i + 1}: words`);
        assert.deepEqual(sorted(g.stats), Object.entries(step.stats).sort(([a], [b]) => (a < b ? -1 : 1)), `step ${i + 1}: statistics`);
      }
    });
  }
});

describe("properties", () => {
  test("the statistics after every step equal a recount of the merged vocabulary", async () => {
    const steps = await learned({ hug: 10, pug: 5, pun: 12, bun: 4, hugs: 5, ugh: 3, gugu: 2 }, 10);
    assert.ok(steps.length > 3);
    for (const [i, s] of steps.entries()) {
      assert.deepEqual(sorted(s.stats), recount(s.vocab), `after merge ${i + 1} of ${s.pair.join(" ")}`);
      for (const [key, n] of s.stats) assert.ok(n > 0, `pair ${key} is kept with count ${n}`);
    }
  });

  test("it returns how many words changed and merges every word that has the pair", async () => {
    const counts = { abc: 2, bcd: 3, cab: 1, bbbb: 1, xyz: 7 };
    const start = vocabOf(counts);
    const expected = start.map((e) => ({ ...e, symbols: mergeWord(e.symbols, "b", "c") }));
    const changedWords = start.filter((e, i) => e.symbols.join(" ") !== expected[i]!.symbols.join(" ")).length;
    const got = (await merges({ counts }, [["b", "c"]])).steps[0];
    assert.equal(got.changed, changedWords);
    assert.deepEqual(got.symbols, expected.map((e) => e.symbols));
    assert.deepEqual(got.counts, expected.map((e) => e.count));
  });

  test("occurrences are merged left to right without overlap, weighted by word counts", async () => {
    const vocab: Entry[] = [{ symbols: ["a", "a", "a", "b"], count: 2 }, { symbols: ["a", "a", "a", "a"], count: 3 }];
    const got = (await merges({ vocab }, [["a", "a"]])).steps[0];
    assert.equal(got.changed, 2);
    assert.deepEqual(got.symbols, [["aa", "a", "b"], ["aa", "aa"]]);
    assert.deepEqual(sorted(got.stats), [["a b", 2], ["aa a", 2], ["aa aa", 3]]);
  });

  test("the same Map and the same entries are updated in place; counts stay", async () => {
    const got = await merges({ counts: { low: 5, lowest: 2 } }, [["l", "o"]]);
    const step = got.steps[0];
    assert.ok(got.sameEntries, "entries are the same objects");
    assert.ok(got.sameMap, "the statistics are the same Map");
    assert.deepEqual(step.counts, [5, 2]);
    const stats = new Map(step.stats);
    assert.equal(stats.get("l o"), undefined);
    assert.equal(stats.get("lo w</w>"), 5);
    assert.equal(stats.get("lo w"), 2);
    assert.equal(stats.get("w e"), 2);
  });

  test("a pair that occurs nowhere changes nothing and returns 0", async () => {
    const counts = { low: 5, new: 2 };
    const words = vocabOf(counts).map((e) => e.symbols.join(" "));
    const got = await merges({ counts }, [["z", "q"], ["w</w>", "l"]]);
    for (const step of got.steps) {
      assert.equal(step.changed, 0);
      assert.deepEqual(step.words, words);
      assert.deepEqual(sorted(step.stats), recount(vocabOf(counts)));
    }
  });

  test("symbols that only look alike are not merged: the pair must be adjacent and exact", async () => {
    const vocab: Entry[] = [{ symbols: ["e", "s", "t</w>"], count: 1 }, { symbols: ["es", "t</w>"], count: 4 }, { symbols: ["e", "x", "s"], count: 2 }];
    const got = (await merges({ vocab }, [["e", "s"]])).steps[0];
    assert.equal(got.changed, 1);
    assert.deepEqual(got.symbols, [["es", "t</w>"], ["es", "t</w>"], ["e", "x", "s"]]);
    const stats = new Map(got.stats);
    assert.equal(stats.get("es t</w>"), 5);
    assert.equal(stats.get("e s"), undefined);
  });
});
