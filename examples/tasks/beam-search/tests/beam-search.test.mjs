// Grader tests for beamSearch (src/beam.js): beam search with GNMT length normalisation.
//
// beamSearch runs in the candidate process (@lmr/bridge): the probes below give it a step
// function built there from a table (or the workspace's bigram model), and return the
// hypotheses and the prefixes the search asked for, as plain data. Expectations are computed
// here from the same tables.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { probe } from "@lmr/bridge";

const RECORDED = JSON.parse(readFileSync(new URL("../fixtures/beam_cases.json", import.meta.url), "utf8"));
const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
const lp = (len, alpha) => ((5 + len) / 6) ** alpha;

/** beamSearch over a fixed table model (next-token log-probabilities depend on the last token only), and the prefixes it asked for. */
const tableSearch = probe(async function tableSearch(rows, options) {
  const { beamSearch } = await lmr.load("src/beam.js");
  const calls = [];
  const step = (prefix) => {
    calls.push([...prefix]);
    return rows[prefix[prefix.length - 1]].map((p) => (p === 0 ? -Infinity : Math.log(p)));
  };
  return { hyps: beamSearch(step, options), calls };
});

/** beamSearch over the workspace's bigram model of a corpus (the recorded searches). */
const corpusSearch = probe(async function corpusSearch(corpus, k, options) {
  const { beamSearch } = await lmr.load("src/beam.js");
  const { modelFromText } = await lmr.load("src/bigram.js");
  const model = modelFromText(corpus, k);
  return beamSearch((p) => model.logProbs(p), { ...options, bos: model.bos, eos: model.eos });
});

const search = async (rows, options) => (await tableSearch(rows, options)).hyps;

// tokens: 0 = bos, 1 = eos, 2..4 words; rows sum to 1; bos is never a next token
const ROWS = [
  [0, 0.1, 0.5, 0.3, 0.1],
  [0, 1, 0, 0, 0],
  [0, 0.2, 0.1, 0.6, 0.1],
  [0, 0.5, 0.2, 0.05, 0.25],
  [0, 0.7, 0.1, 0.1, 0.1],
];

describe("recorded searches", () => {
  for (const c of RECORDED.cases) {
    test(`beam ${c.beamSize}, max length ${c.maxLength}, alpha ${c.alpha}`, async () => {
      const got = await corpusSearch(RECORDED.corpus, RECORDED.k, { beamSize: c.beamSize, maxLength: c.maxLength, alpha: c.alpha });
      assert.deepEqual(got.map((h) => h.tokens), c.hypotheses.map((h) => h.tokens));
      got.forEach((h, i) => {
        close(h.logProb, c.hypotheses[i].logProb, `hypothesis ${i} logProb`);
        close(h.score, c.hypotheses[i].score, `hypothesis ${i} score`);
      });
    });
  }
});

describe("properties", () => {
  test("beam size 1 is greedy decoding", async () => {
    const got = await search(ROWS, { bos: 0, eos: 1, beamSize: 1, maxLength: 6, alpha: 0.6 });
    const greedy = [];
    let last = 0;
    let logProb = 0;
    while (greedy.length < 6) {
      const row = ROWS[last];
      let best = 1;
      for (let v = 1; v < row.length; v++) if (row[v] > row[best]) best = v;
      greedy.push(best);
      logProb += Math.log(row[best]);
      last = best;
      if (best === 1) break;
    }
    assert.equal(got.length, 1);
    assert.deepEqual(got[0].tokens, greedy);
    close(got[0].logProb, logProb, "logProb");
  });

  test("a beam wide enough to keep everything finds the exhaustive best and every ending", async () => {
    const got = await search(ROWS, { bos: 0, eos: 1, beamSize: 64, maxLength: 3, alpha: 0.6 });
    const all = [];
    const walk = (tokens, logProb) => {
      if (tokens.length > 0 && (tokens.at(-1) === 1 || tokens.length === 3)) {
        all.push({ tokens, logProb, score: logProb / lp(tokens.length, 0.6) });
        return;
      }
      const row = ROWS[tokens.length === 0 ? 0 : tokens.at(-1)];
      for (let v = 1; v < row.length; v++) if (row[v] > 0) walk([...tokens, v], logProb + Math.log(row[v]));
    };
    walk([], 0);
    assert.equal(got.length, all.length);
    const key = (h) => h.tokens.join(",");
    assert.deepEqual(new Set(got.map(key)), new Set(all.map(key)));
    const best = all.reduce((a, b) => (b.score > a.score ? b : a));
    assert.deepEqual(got[0].tokens, best.tokens);
    close(got[0].score, best.score, "best score");
  });

  test("hypotheses are sorted best first by logProb / ((5 + |Y|) / 6) ^ alpha, |Y| counting eos", async () => {
    for (const alpha of [0, 0.6, 1.5]) {
      const got = await search(ROWS, { bos: 0, eos: 1, beamSize: 3, maxLength: 5, alpha });
      assert.ok(got.length >= 3);
      for (const h of got) close(h.score, h.logProb / lp(h.tokens.length, alpha), `score of ${h.tokens}`);
      for (let i = 1; i < got.length; i++) assert.ok(got[i - 1].score >= got[i].score, `sorted at ${i} (alpha ${alpha})`);
    }
  });

  test("alpha defaults to 0.6", async () => {
    const a = await search(ROWS, { bos: 0, eos: 1, beamSize: 2, maxLength: 4 });
    const b = await search(ROWS, { bos: 0, eos: 1, beamSize: 2, maxLength: 4, alpha: 0.6 });
    assert.deepEqual(a, b);
  });

  test("each logProb is the sum of the step's log-probabilities along the hypothesis", async () => {
    const got = await search(ROWS, { bos: 0, eos: 1, beamSize: 4, maxLength: 5, alpha: 0.6 });
    for (const h of got) {
      let sum = 0;
      let last = 0;
      for (const t of h.tokens) {
        sum += Math.log(ROWS[last][t]);
        last = t;
      }
      close(h.logProb, sum, `logProb of ${h.tokens}`);
      assert.ok(!h.tokens.includes(0), "bos is never generated");
      assert.ok(h.tokens.indexOf(1) === -1 || h.tokens.indexOf(1) === h.tokens.length - 1, "eos only at the end");
    }
  });

  test("prefixes start with bos; finished hypotheses are not extended; at most beamSize beams per step", async () => {
    const { calls } = await tableSearch(ROWS, { bos: 0, eos: 1, beamSize: 2, maxLength: 4, alpha: 0.6 });
    assert.ok(calls.length > 0);
    for (const p of calls) {
      assert.equal(p[0], 0);
      assert.ok(!p.includes(1), `extended a finished hypothesis ${p}`);
    }
    const perLength = new Map();
    for (const p of calls) perLength.set(p.length, (perLength.get(p.length) ?? 0) + 1);
    assert.equal(perLength.get(1), 1);
    for (const [len, n] of perLength) assert.ok(n <= 2, `${n} beams at length ${len}`);
  });

  test("the best candidates are kept, finished ones leave the beam, ties go to smaller token ids", async () => {
    // after bos: 2 and 3 tie; with beam 1, 2 is kept
    const rows = [[0, 0.2, 0.4, 0.4], [0, 1, 0, 0], [0, 0.9, 0.05, 0.05], [0, 0.1, 0.1, 0.8]];
    const one = await search(rows, { bos: 0, eos: 1, beamSize: 1, maxLength: 3, alpha: 0 });
    assert.deepEqual(one.map((h) => h.tokens), [[2, 1]]);
    const two = await search(rows, { bos: 0, eos: 1, beamSize: 2, maxLength: 3, alpha: 0 });
    assert.deepEqual(two.map((h) => h.tokens), [[2, 1], [3, 3, 3], [3, 3, 1]]);
  });

  test("beams still live at maxLength are returned; maxLength 1 stops after one step", async () => {
    const got = await search(ROWS, { bos: 0, eos: 1, beamSize: 3, maxLength: 1, alpha: 0.6 });
    assert.deepEqual(got.map((h) => h.tokens).sort(), [[1], [2], [3]].sort());
  });

  test("bad sizes are RangeErrors", async () => {
    for (const beamSize of [0, -1, 1.5]) await assert.rejects(() => search(ROWS, { bos: 0, eos: 1, beamSize, maxLength: 3 }), RangeError);
    for (const maxLength of [0, 2.5]) await assert.rejects(() => search(ROWS, { bos: 0, eos: 1, beamSize: 2, maxLength }), RangeError);
  });
});
