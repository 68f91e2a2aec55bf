// Writes fixtures/beam_cases.json from the reference beamSearch. lmr record runs it with Node
// from the workspace with the reference in place and LMR_FIXTURES_OUT set.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const from = (file) => import(pathToFileURL(join(process.cwd(), file)).href);
const { modelFromText } = await from("src/bigram.js");
const { beamSearch } = await from("src/beam.js");

const CORPUS = [
  "the cat sat on the mat",
  "the dog sat on the log",
  "a cat saw the dog",
  "the dog ran",
  "a bird sang on the log",
  "the cat ran to the mat",
];
const model = modelFromText(CORPUS, 0.25);
const step = (prefix) => model.logProbs(prefix);
const cases = [];
for (const [beamSize, maxLength, alpha] of [[1, 6, 0.6], [2, 6, 0.6], [3, 8, 0.6], [4, 8, 1.0], [5, 5, 0], [3, 1, 0.6], [8, 7, 0.8]]) {
  const hyps = beamSearch(step, { bos: model.bos, eos: model.eos, beamSize, maxLength, alpha });
  cases.push({ beamSize, maxLength, alpha, hypotheses: hyps });
}
const out = join(process.env.LMR_FIXTURES_OUT, "fixtures");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "beam_cases.json"), `${JSON.stringify({ note: "recorded from the reference beamSearch by generators/beam_cases.mjs", corpus: CORPUS, k: 0.25, cases }, null, 1)}\n`);
