import { readFile, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { AGENT_DIR, DIFF_FILE, LOG_FILE, type JudgeVote } from "../run-folder/index.js";
import type { LoadedRun } from "./read-run.js";

/** Most characters of one file shown in the HTML report; the rest is cut, saying so. */
const FILE_MAX = 60_000;
const AGENT_FILES_MAX = 8;

/** What the HTML report's sample panel shows beyond the summary: the files of the sample's folder. */
export interface SampleDetails {
  diff?: string;
  testLog?: string;
  /** Files under the sample's agent/ folder (an agent's own logs), relative to it. */
  agentLogs: { name: string; text: string }[];
  votes: JudgeVote[];
}

/** Reads each sample's diff, test log, agent logs and judge votes; a file that is missing is just not shown. */
export async function loadSampleDetails(run: LoadedRun): Promise<Map<string, SampleDetails>> {
  const out = new Map<string, SampleDetails>();
  await Promise.all(
    Object.entries(run.sampleDirs ?? {}).map(async ([id, dir]) => {
      const diff = await readCut(join(dir, DIFF_FILE));
      const testLog = await readCut(join(dir, LOG_FILE));
      const agentLogs: SampleDetails["agentLogs"] = [];
      const agentDir = join(dir, AGENT_DIR);
      const entries = await readdir(agentDir, { recursive: true, withFileTypes: true }).catch(() => []);
      for (const e of entries
        .filter((x) => x.isFile())
        .sort((a, b) => join(a.parentPath, a.name).localeCompare(join(b.parentPath, b.name)))
        .slice(0, AGENT_FILES_MAX)) {
        const path = join(e.parentPath, e.name);
        const text = await readCut(path);
        if (text !== undefined) agentLogs.push({ name: relative(agentDir, path), text });
      }
      out.set(id, { ...(diff !== undefined ? { diff } : {}), ...(testLog ? { testLog } : {}), agentLogs, votes: run.judgements?.[id]?.votes ?? [] });
    }),
  );
  return out;
}

async function readCut(path: string): Promise<string | undefined> {
  const text = await readFile(path, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  return text.length <= FILE_MAX ? text : `${text.slice(0, FILE_MAX)}\n[… ${text.length - FILE_MAX} more characters in ${path} …]\n`;
}
