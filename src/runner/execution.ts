import type { RecordReader } from "./channel.js";
import type { Isolation } from "./types.js";
import type { ProcessFacts } from "./verdict.js";

/** What one backend's execution hands back to the verdict. */
export interface Execution {
  facts: ProcessFacts;
  reader: RecordReader;
  log: string;
  isolation: Isolation;
}
