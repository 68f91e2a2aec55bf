import { JUDGE_CLASSES, type JudgeClass } from "../run-folder/index.js";

/**
 * The class most votes gave and its share of the classified votes. A tie
 * goes to the worse class (JUDGE_CLASSES is worst first): the judge is never
 * more lenient than its votes.
 */
export function majorityOf(classes: JudgeClass[]): { majority: JudgeClass; agreement: number } | undefined {
  if (classes.length === 0) return undefined;
  const counts = JUDGE_CLASSES.map((c) => ({ c, n: classes.filter((x) => x === c).length }));
  const best = counts.reduce((a, b) => (b.n > a.n ? b : a));
  return { majority: best.c, agreement: best.n / classes.length };
}
