/**
 * Work to undo when lmr is stopped by SIGINT, SIGTERM or SIGHUP (Ctrl-C, a CI cancel):
 * each registered cleanup runs, synchronously, and the signal is then raised again with its
 * default action, so lmr still dies of it. kill -9 cannot be caught: whoever registers a
 * cleanup also needs a sweep at the next start. Returns the function that unregisters it.
 */
const cleanups = new Set<() => void>();
let hooked = false;

export function onStopSignal(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  if (!hooked) {
    hooked = true;
    for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      process.once(sig, () => {
        for (const c of cleanups) {
          try {
            c();
          } catch {
            // one cleanup failing must not keep the others from running
          }
        }
        process.kill(process.pid, sig);
      });
    }
  }
  return () => cleanups.delete(cleanup);
}
