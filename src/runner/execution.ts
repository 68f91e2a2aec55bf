import type { RecordReader } from "./channel.js";
import type { Scratch } from "./scratch.js";
import type { Isolation, RunRequest } from "./types.js";
import type { ProcessFacts } from "./verdict.js";

/** What one backend's execution hands back to the verdict. */
export interface Execution {
  facts: ProcessFacts;
  reader: RecordReader;
  log: string;
  isolation: Isolation;
}

/** What a fresh or a forked oracle hands back: the facts and records the verdict is decided from, and its log. */
export interface OracleRunResult {
  facts: ProcessFacts;
  reader: RecordReader;
  log: string;
}

/** One run's place in an oracles' server (oracle-server.ts). */
export interface OracleSlot {
  /** The run's bridge folder: the candidate binds it, and nothing else of the server's. */
  socketDir: string;
  /** Where the run's oracle side (its grader copy, home and tmp) now is. */
  paths: Pick<Scratch, "oracleRoot" | "mountDir" | "oracleHome" | "oracleTmp">;
  /** The tests, forked; undefined where the server could not start (the caller runs a fresh oracle on `paths`). */
  run(o: { req: RunRequest; socket: string; memoryMb: number }): Promise<OracleRunResult | undefined>;
  close(): Promise<void>;
}

/** Where a run's tests can be forked from instead of started fresh. */
export interface OracleHost {
  open(scratch: Scratch, mount: string): Promise<OracleSlot>;
}
