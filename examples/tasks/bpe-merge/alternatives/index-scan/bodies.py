# Alternative 'index-scan' for bpe-merge: the body it writes into the workspace's masked stub.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").
# Written from the instruction and the workspace only: the changes of all words are summed into
# one delta table first, then applied to the statistics.

# lmr-body: src/merge.ts::applyMerge
  const delta = new Map<PairKey, number>();
  const note = (a: string, b: string, by: number): void => {
    const key = pairKey(a, b);
    delta.set(key, (delta.get(key) ?? 0) + by);
  };
  let changed = 0;
  for (const entry of vocab) {
    const old = entry.symbols;
    const at: number[] = [];
    for (let i = 0; i < old.length - 1; i++) {
      if (old[i] === left && old[i + 1] === right) {
        at.push(i);
        i++;
      }
    }
    if (at.length === 0) continue;
    const next: string[] = [];
    let from = 0;
    for (const i of at) {
      next.push(...old.slice(from, i), left + right);
      from = i + 2;
    }
    next.push(...old.slice(from));
    for (let i = 0; i + 1 < old.length; i++) note(old[i]!, old[i + 1]!, -entry.count);
    for (let i = 0; i + 1 < next.length; i++) note(next[i]!, next[i + 1]!, entry.count);
    entry.symbols = next;
    changed++;
  }
  for (const [key, by] of delta) {
    if (by === 0) continue;
    const total = (stats.get(key) ?? 0) + by;
    if (total === 0) stats.delete(key);
    else stats.set(key, total);
  }
  return changed;
