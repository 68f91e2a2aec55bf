# Alternative 'rescan': for every word that contains the pair, take all of the word's pairs
# out of the statistics, merge the word with mergeSymbols, and put all of its new pairs back.

# lmr-body: src/merge.ts::applyMerge
  let changed = 0;
  for (const entry of vocab) {
    if (!hasPair(entry.symbols, left, right)) continue;
    adjust(stats, entry.symbols, -entry.count);
    entry.symbols = mergeSymbols(entry.symbols, left, right);
    adjust(stats, entry.symbols, entry.count);
    changed += 1;
  }
  return changed;
