/** Edit distance (Levenshtein), case-insensitive: how far a typo is from a known word. */
export function measureEditDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let prev = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const row = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost));
    }
    prev = row;
  }
  return prev[t.length]!;
}

/** The known word closest to `word`, when it is close enough to be a likely typo. */
export function suggestClosest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = measureEditDistance(word, k);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  const allowed = Math.max(2, Math.floor((best?.length ?? 0) / 3));
  return best !== undefined && bestDistance <= allowed ? best : undefined;
}
