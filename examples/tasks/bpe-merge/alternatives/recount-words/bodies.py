# Alternative 'recount-words' for bpe-merge: the body it writes into the workspace's masked stub.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").
# Written from the instruction and the workspace only: each changed word's pairs are taken out
# of the statistics and its new pairs put in, with a local counter.

# lmr-body: src/merge.ts::applyMerge
  const bump = (symbols: readonly string[], weight: number): void => {
    for (let k = 1; k < symbols.length; k++) {
      const key = pairKey(symbols[k - 1]!, symbols[k]!);
      const total = (stats.get(key) ?? 0) + weight;
      if (total === 0) stats.delete(key);
      else stats.set(key, total);
    }
  };
  let words = 0;
  for (const entry of vocab) {
    const merged = mergeSymbols(entry.symbols, left, right);
    if (merged.length === entry.symbols.length) continue;
    bump(entry.symbols, -entry.count);
    bump(merged, entry.count);
    entry.symbols = merged;
    words += 1;
  }
  return words;
