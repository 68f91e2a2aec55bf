/**
 * Unbiased pass@k estimator (Chen et al. 2021, "Evaluating Large Language Models
 * Trained on Code"): the probability that at least one of k samples drawn without
 * replacement from n, of which c are correct, is correct:
 *   1 − C(n−c, k) / C(n, k)  =  1 − ∏_{i=n−c+1}^{n} (1 − k/i)
 * The product form never builds large binomials, so it stays exact enough for any n.
 */
export function computePassAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k)) {
    throw new RangeError(`pass@k needs integers, got n=${n}, c=${c}, k=${k}`);
  }
  if (n < 1 || c < 0 || c > n || k < 1 || k > n) {
    throw new RangeError(`pass@k needs 0 <= c <= n and 1 <= k <= n, got n=${n}, c=${c}, k=${k}`);
  }
  // Fewer wrong samples than draws: every draw of k contains a correct one.
  if (n - c < k) return 1;
  let allWrong = 1;
  for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  return 1 - allWrong;
}

/** pass@k for every k in 1..n (empty when n is 0). */
export function computePassAtKs(n: number, c: number): { k: number; value: number }[] {
  const out: { k: number; value: number }[] = [];
  for (let k = 1; k <= n; k++) out.push({ k, value: computePassAtK(n, c, k) });
  return out;
}
