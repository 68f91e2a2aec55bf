# Alternative 'heap-free' for beam-search: the body it writes into the workspace's masked stub.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").
# Written from the instruction and the workspace only: an insertion-sorted pool of size beamSize
# instead of sorting all extensions.

# lmr-body: src/beam.js::beamSearch
  const positive = (n) => Number.isInteger(n) && n >= 1;
  if (!positive(beamSize)) throw new RangeError(`beamSize must be a positive integer: ${beamSize}`);
  if (!positive(maxLength)) throw new RangeError(`maxLength must be a positive integer: ${maxLength}`);
  const done = [];
  let beams = [{ tokens: [], logProb: 0 }];
  let steps = 0;
  while (beams.length > 0 && steps < maxLength) {
    steps += 1;
    const pool = [];
    for (const b of beams) {
      const scores = step([bos].concat(b.tokens));
      for (let tok = 0; tok < scores.length; tok++) {
        if (!Number.isFinite(scores[tok])) continue;
        const cand = { tokens: b.tokens.concat([tok]), logProb: b.logProb + scores[tok] };
        let at = pool.length;
        while (at > 0 && compareCandidates(cand, pool[at - 1]) < 0) at--;
        if (at < beamSize) {
          pool.splice(at, 0, cand);
          if (pool.length > beamSize) pool.pop();
        }
      }
    }
    beams = pool.filter((c) => c.tokens[c.tokens.length - 1] !== eos);
    for (const c of pool) if (c.tokens[c.tokens.length - 1] === eos) done.push(c);
  }
  const all = done.concat(beams).map((h) => ({ tokens: h.tokens, logProb: h.logProb, score: normalizedScore(h.logProb, h.tokens.length, alpha) }));
  all.sort(compareFinished);
  return all;
