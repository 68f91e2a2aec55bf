import pLimit from "p-limit";

/**
 * The test runs one verify invocation may have in flight at once, shared by every
 * task it verifies: reference, stub, alternative, mutant and fixture runs all take
 * a slot, so tasks verified side by side keep the cores busy without oversubscribing
 * them (a mutant's timeout is a few reference durations, measured on a loaded machine).
 */
export type RunSlots = <T>(run: () => Promise<T>) => Promise<T>;

export function createRunSlots(n: number): RunSlots {
  const limit = pLimit(Math.max(1, n));
  return (run) => limit(run);
}
