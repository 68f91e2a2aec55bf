/**
 * Cleanup a run may hand back instead of waiting for it: removing its scratch copy and its
 * emptied cgroups, after its processes are gone. `lmr eval` grades the next sample meanwhile
 * (that wait was several milliseconds of every short sample) and settles everything before
 * it releases its run folder; a caller that asks for deferral must call settleDeferred().
 */
const pending = new Set<Promise<void>>();

export function deferCleanup(work: Promise<unknown>): void {
  const p: Promise<void> = work.then(
    () => undefined,
    () => undefined,
  );
  pending.add(p);
  void p.then(() => pending.delete(p));
}

/** Waits for every deferred cleanup, including any deferred while it waits. */
export async function settleDeferred(): Promise<void> {
  while (pending.size > 0) await Promise.all([...pending]);
}
