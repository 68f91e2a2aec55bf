# Alternative 'localdelta': one scan per word marks which old positions a merge consumed and
# which new positions are merged symbols; only the pairs touching those positions are
# subtracted (old) or added (new), accumulated in one delta map over the whole vocabulary and
# applied to the statistics once at the end (zero counts removed).

# lmr-body: src/merge.ts::applyMerge
  const merged = left + right;
  const delta = new Map<PairKey, number>();
  const bump = (a: string, b: string, by: number): void => {
    const key = pairKey(a, b);
    delta.set(key, (delta.get(key) ?? 0) + by);
  };
  let changed = 0;
  for (const entry of vocab) {
    const old = entry.symbols;
    const n = old.length;
    const consumed: boolean[] = new Array(n).fill(false);
    const next: string[] = [];
    const fresh: boolean[] = [];
    let any = false;
    for (let i = 0; i < n; ) {
      if (i + 1 < n && old[i] === left && old[i + 1] === right) {
        consumed[i] = true;
        consumed[i + 1] = true;
        next.push(merged);
        fresh.push(true);
        any = true;
        i += 2;
      } else {
        next.push(old[i]!);
        fresh.push(false);
        i += 1;
      }
    }
    if (!any) continue;
    const w = entry.count;
    for (let j = 0; j + 1 < n; j++) {
      if (consumed[j] || consumed[j + 1]) bump(old[j]!, old[j + 1]!, -w);
    }
    for (let k = 0; k + 1 < next.length; k++) {
      if (fresh[k] || fresh[k + 1]) bump(next[k]!, next[k + 1]!, w);
    }
    entry.symbols = next;
    changed += 1;
  }
  for (const [key, d] of delta) {
    if (d === 0) continue;
    const value = (stats.get(key) ?? 0) + d;
    if (value === 0) stats.delete(key);
    else stats.set(key, value);
  }
  return changed;
