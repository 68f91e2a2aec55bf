import type { RecordReader } from "./channel.js";
import type { RunOutcome, RunRequest } from "./types.js";

/** What a run's records say beyond the verdict (imports, the servers' plans, traced lines), as a RunOutcome carries it. */
export function outcomeExtras(reader: RecordReader, req: Pick<RunRequest, "traceLines">): Partial<RunOutcome> {
  const s = reader.state;
  return {
    ...(s.imports ? { imports: s.imports } : {}),
    ...(s.envChanges ? { env_changes: s.envChanges } : {}),
    ...(s.loaded ? { loaded_modules: s.loaded } : {}),
    ...(s.candidateLoaded ? { candidate_loaded_modules: s.candidateLoaded } : {}),
    ...(s.candidateEnvChanges ? { candidate_env_changes: s.candidateEnvChanges } : {}),
    ...(req.traceLines ? { lines: s.lines } : {}),
  };
}
