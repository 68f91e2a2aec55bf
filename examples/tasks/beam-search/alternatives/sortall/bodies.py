# Alternative 'sortall': hypotheses carry their token arrays; each step collects every finite
# extension of every live hypothesis, sorts the whole candidate list with compareCandidates
# and keeps the first beamSize; the finished list is sorted once at the end.

# lmr-body: src/beam.js::beamSearch
  if (!Number.isInteger(beamSize) || beamSize < 1) throw new RangeError(`beamSize must be a positive integer, got ${beamSize}`);
  if (!Number.isInteger(maxLength) || maxLength < 1) throw new RangeError(`maxLength must be a positive integer, got ${maxLength}`);
  let live = [{ tokens: [], logProb: 0 }];
  const finished = [];
  for (let t = 0; t < maxLength && live.length > 0; t++) {
    const candidates = [];
    for (const hyp of live) {
      const logProbs = step([bos, ...hyp.tokens]);
      for (let token = 0; token < logProbs.length; token++) {
        const lp = logProbs[token];
        if (!Number.isFinite(lp)) continue;
        candidates.push({ tokens: [...hyp.tokens, token], logProb: hyp.logProb + lp });
      }
    }
    candidates.sort(compareCandidates);
    live = [];
    for (const cand of candidates.slice(0, beamSize)) {
      if (cand.tokens[cand.tokens.length - 1] === eos) finished.push(cand);
      else live.push(cand);
    }
  }
  finished.push(...live);
  return finished
    .map(({ tokens, logProb }) => ({ tokens, logProb, score: normalizedScore(logProb, tokens.length, alpha) }))
    .sort(compareFinished);
