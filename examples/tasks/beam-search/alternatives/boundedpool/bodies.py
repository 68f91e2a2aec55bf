# Alternative 'boundedpool': hypotheses are back-pointer nodes (parent, token, logProb, length);
# each step keeps only a sorted pool of at most beamSize candidates, inserting each extension
# by binary search and dropping the worst when the pool overflows. Finished hypotheses are
# inserted into their result list in compareFinished order as they finish.

# lmr-body: src/beam.js::beamSearch
  const positiveInt = (x) => typeof x === "number" && Number.isInteger(x) && x > 0;
  if (!positiveInt(beamSize)) throw new RangeError(`beamSize must be a positive integer, got ${beamSize}`);
  if (!positiveInt(maxLength)) throw new RangeError(`maxLength must be a positive integer, got ${maxLength}`);

  const tokensOf = (node) => {
    const out = new Array(node.length);
    for (let n = node, i = node.length - 1; n.parent !== null; n = n.parent, i--) out[i] = n.token;
    return out;
  };
  // Inserts item into the sorted array by cmp (after equal items); returns the index.
  const insertSorted = (arr, item, cmp) => {
    let lo = 0;
    let hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(arr[mid], item) <= 0) lo = mid + 1;
      else hi = mid;
    }
    arr.splice(lo, 0, item);
    return lo;
  };

  const results = [];
  const finish = (node) => {
    const tokens = node.tokens;
    insertSorted(results, { tokens, logProb: node.logProb, score: normalizedScore(node.logProb, tokens.length, alpha) }, compareFinished);
  };

  const root = { parent: null, token: -1, logProb: 0, length: 0, tokens: [] };
  let beam = [root];
  let steps = 0;
  while (beam.length > 0 && steps < maxLength) {
    steps += 1;
    const pool = [];
    for (const node of beam) {
      const scores = step([bos].concat(node.tokens));
      const n = scores.length;
      for (let token = 0; token < n; token++) {
        const lp = scores[token];
        if (lp === -Infinity || Number.isNaN(lp) || lp === Infinity) continue;
        const logProb = node.logProb + lp;
        const child = { parent: node, token, logProb, length: node.length + 1, tokens: null };
        child.tokens = tokensOf(child);
        if (pool.length === beamSize && compareCandidates(child, pool[pool.length - 1]) >= 0) continue;
        insertSorted(pool, child, compareCandidates);
        if (pool.length > beamSize) pool.pop();
      }
    }
    beam = [];
    for (const node of pool) {
      if (node.token === eos) finish(node);
      else beam.push(node);
    }
  }
  for (const node of beam) finish(node);
  return results;
