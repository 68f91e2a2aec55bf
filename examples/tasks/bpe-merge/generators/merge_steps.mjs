// Writes fixtures/merge_steps.json from the reference applyMerge. lmr record runs it with Node
// from the workspace with the reference in place (TypeScript imports transpiled by lmr's
// loader hooks) and LMR_FIXTURES_OUT set (CONTRIBUTING.md, "Fixtures").
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const from = (file) => import(pathToFileURL(join(process.cwd(), file)).href);
const { buildVocab, countWords } = await from("src/vocab.ts");
const { applyMerge, bestPair, countPairs } = await from("src/merge.ts");

const CORPORA = {
  paper: { low: 5, lower: 2, newest: 6, widest: 3 },
  text: Object.fromEntries(countWords("the lowest tide of the newest sea rose over the lower dunes and the widest low bank while the newer tides were lower still and the slower boats rested low in the reeds")),
  repeats: { aaaa: 3, aaab: 2, baaa: 1, abab: 4 },
};
const cases = [];
for (const [name, counts] of Object.entries(CORPORA)) {
  const vocab = buildVocab(counts);
  const stats = countPairs(vocab);
  const steps = [];
  for (let i = 0; i < 12; i++) {
    const best = bestPair(stats);
    if (!best) break;
    const [left, right] = best.pair;
    const changed = applyMerge(vocab, stats, left, right);
    steps.push({ left, right, changed, words: vocab.map((e) => e.symbols.join(" ")), stats: Object.fromEntries([...stats].sort(([a], [b]) => (a < b ? -1 : 1))) });
  }
  cases.push({ name, counts, steps });
}
const out = join(process.env.LMR_FIXTURES_OUT, "fixtures");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "merge_steps.json"), `${JSON.stringify({ note: "recorded from the reference applyMerge by generators/merge_steps.mjs", cases }, null, 1)}\n`);
