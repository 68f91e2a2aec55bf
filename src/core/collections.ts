/** `xs` grouped by `key`, groups and their members in first-seen order. */
export function groupBy<T, K = string>(xs: Iterable<T>, key: (x: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const x of xs) {
    const k = key(x);
    const list = out.get(k);
    if (list) list.push(x);
    else out.set(k, [x]);
  }
  return out;
}
