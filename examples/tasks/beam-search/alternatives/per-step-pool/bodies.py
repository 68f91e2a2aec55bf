# Alternative 'per-step-pool' for beam-search: the body it writes into the workspace's masked stub.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").
# Written from the instruction and the workspace only: a recursive step over the live beams.

# lmr-body: src/beam.js::beamSearch
  for (const [name, value] of [["beamSize", beamSize], ["maxLength", maxLength]]) {
    if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer`);
  }
  const finish = (h) => ({ tokens: h.tokens, logProb: h.logProb, score: normalizedScore(h.logProb, h.tokens.length, alpha) });
  const search = (live, depth, finished) => {
    if (live.length === 0) return finished;
    if (depth === maxLength) return finished.concat(live.map(finish));
    const extensions = live.flatMap((h) => {
      const row = Array.from(step([bos, ...h.tokens]));
      return row.flatMap((lp, tok) => (lp === -Infinity ? [] : [{ tokens: [...h.tokens, tok], logProb: h.logProb + lp }]));
    });
    const kept = extensions.sort(compareCandidates).slice(0, beamSize);
    const ended = kept.filter((h) => h.tokens.at(-1) === eos);
    return search(kept.filter((h) => h.tokens.at(-1) !== eos), depth + 1, finished.concat(ended.map(finish)));
  };
  return search([{ tokens: [], logProb: 0 }], 0, []).sort(compareFinished);
