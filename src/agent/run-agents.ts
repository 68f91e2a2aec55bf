import { toolkitIdentity } from "../core/toolkit-identity.js";
import { mkdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import pLimit from "p-limit";
import { BUNDLE_FILES, type BundleInfo } from "../bundle/index.js";
import { sha256 } from "../core/hash.js";
import { TOOLKIT_ROOT } from "../core/paths.js";
import { writeFileAtomic, writeJsonAtomic } from "../core/fs-atomic.js";
import { lockRunDir } from "../evaluate/run-dir.js";
import { checkRunFolderLayout } from "../evaluate/run-state.js";
import { DEFAULT_LEVEL, instructionPath, requireLevel, type InstructionLevel } from "../manifest/level.js";
import { prepareBundles, runEval, type EvalOptions, type EvalOutcome } from "../evaluate/run-eval.js";
import type { ResolvedTask } from "../manifest/types.js";
import { nameModelFolder } from "../run-folder/index.js";
import type { SourceOptions } from "../source/types.js";
import { AGENT_FILES, runAgentSample, submissionRow, type AgentRecord, type AgentSampleInput, type AgentSandboxChoice } from "./run-agent.js";

/** RUN_DIR/agent/: what `lmr agent run` adds to a run folder. */
export const AGENT_DIR = "agent";
export const AGENT_RUN_FILES = {
  submissions: "submissions.jsonl",
  summary: "agent-run.json",
} as const;

export interface AgentRunOptions extends SourceOptions {
  tasks: ResolvedTask[];
  /** Folders every task id may be read from (the tasks folder): hidden from the agent too. */
  tasksRoot?: string;
  outDir: string;
  /** The command template (a preset's, or --cmd). */
  command: string;
  preset?: string;
  model: string;
  samples: number;
  /** The instruction the agent gets (default "paper"); the graded run records it. */
  level?: InstructionLevel;
  /** Agents run at once. */
  agentJobs: number;
  timeoutS: number;
  network: boolean;
  agentSandbox: AgentSandboxChoice;
  image?: string;
  envNames: string[];
  readOnly: string[];
  /** How the patches are graded: as lmr eval would (a queue's dispatcher included). */
  grade: Pick<EvalOptions, "jobs" | "sandbox" | "python" | "set" | "knownTaskIds" | "dispatcher">;
  /** Where one agent runs (default: here, runAgentSample); a queue's workers with `lmr agent run --queue`. */
  runSample?: (input: AgentSampleInput, hashes: BundleInfo["hashes"]) => Promise<AgentRecord>;
  onAgent?: (p: { done: number; total: number; reused: number; last?: AgentRecord }) => void;
  onGrade?: EvalOptions["onProgress"];
}

export interface AgentRunSummary {
  model: string;
  level: InstructionLevel;
  command: string;
  preset?: string;
  timeout_s: number;
  network: boolean;
  samples: {
    task_id: string;
    sample: string;
    status: AgentRecord["status"];
    reason?: string;
    backend: string;
    exit_code: number | null;
    wall_s: number;
    changed: string[];
    verdict?: string;
    files: string;
  }[];
  totals: { samples: number; ran: number; reused: number; finished: number; timeout: number; workspace_deleted: number; infra: number };
}

/**
 * `lmr agent run`: for every (task, sample), the agent on a scratch copy of
 * the masked workspace (runAgentSample), its files under
 * RUN_DIR/agent/<model-folder>/<task>/<sample>/, then one submission row per
 * sample in RUN_DIR/agent/submissions.jsonl, graded into RUN_DIR by lmr eval's
 * own code path, so RUN_DIR is an ordinary run folder. A rerun keeps every
 * agent run whose inputs are unchanged and that did not break on our side.
 */
export async function runAgents(opts: AgentRunOptions): Promise<{ summary: AgentRunSummary; eval: EvalOutcome }> {
  const outDir = resolve(opts.outDir);
  const agentRoot = join(outDir, AGENT_DIR);
  const inputs: AgentSampleInput[] = [];
  const hashesOf = new Map<string, BundleInfo["hashes"]>();
  const level = opts.level ?? DEFAULT_LEVEL;
  requireLevel(opts.tasks, level);
  await checkRunFolderLayout(outDir, level);
  await mkdir(outDir, { recursive: true });
  // The agents run under the run folder's lock, as gradings do: their scratch copies sit in
  // RUN_DIR/.scratch, so after a kill -9 the next run's lock kills the leftovers and sweeps them.
  const lock = await lockRunDir(outDir);
  let records: AgentRecord[];
  let reused = 0;
  try {
    const bundles = await prepareBundles(
      { tasks: opts.tasks, level, ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}), ...(opts.mirror ? { mirror: opts.mirror } : {}) },
      outDir,
    );
    const hide = [
      outDir,
      TOOLKIT_ROOT,
      ...(opts.tasksRoot ? [resolve(opts.tasksRoot)] : []),
      ...opts.tasks.map((t) => t.dir),
      ...[...bundles.values()].map((b) => b.dir),
    ];
    for (const task of opts.tasks) {
      const bundle = bundles.get(task.manifest.id)!;
      hashesOf.set(task.manifest.id, bundle.hashes);
      const instruction = instructionPath(task, level);
      const instructionText = await readFile(instruction, "utf8");
      for (let i = 0; i < opts.samples; i++) {
        const sample = String(i);
        const key = sha256(
          JSON.stringify([
            toolkitIdentity(),
            bundle.hashes.workspace,
            bundle.paper ?? null,
            sha256(instructionText),
            opts.command,
            opts.model,
            sample,
            opts.timeoutS,
            opts.network,
            opts.agentSandbox,
            opts.image ?? null,
            [...opts.envNames].sort(),
            [...opts.readOnly].sort(),
          ]),
        );
        inputs.push({
          task_id: task.manifest.id,
          model: opts.model,
          sample,
          workspace: join(bundle.dir, BUNDLE_FILES.workspace),
          instruction,
          command: opts.command,
          timeout_s: opts.timeoutS,
          network: opts.network,
          sandbox: opts.agentSandbox,
          ...(opts.image ? { image: opts.image } : {}),
          env_names: opts.envNames,
          read_only: opts.readOnly,
          hide,
          out_dir: join(agentRoot, nameModelFolder(opts.model), task.manifest.id, sample),
          scratch_parent: lock.scratch,
          key,
        });
      }
    }
    const limit = pLimit(Math.max(1, opts.agentJobs));
    let done = 0;
    records = await Promise.all(
      inputs.map((input) =>
        limit(async () => {
          const prev = await readRecord(input.out_dir);
          let r: AgentRecord;
          if (prev && prev.key === input.key && prev.status !== "infra") {
            r = prev;
            reused++;
          } else r = opts.runSample ? await opts.runSample(input, hashesOf.get(input.task_id)!) : await runAgentSample(input);
          done++;
          opts.onAgent?.({ done, total: inputs.length, reused, last: r });
          return r;
        }),
      ),
    );
  } finally {
    await lock.release();
  }

  const rows: string[] = [];
  for (const [i, r] of records.entries()) {
    const patch = await readFile(join(inputs[i]!.out_dir, AGENT_FILES.patch), "utf8").catch(() => "");
    rows.push(JSON.stringify(submissionRow(r, patch)));
  }
  const submissions = join(agentRoot, AGENT_RUN_FILES.submissions);
  await writeFileAtomic(submissions, rows.join("\n") + "\n");

  const evalOutcome = await runEval({
    submissions,
    tasks: opts.tasks,
    outDir,
    ...opts.grade,
    level,
    jobs: opts.grade.jobs,
    ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}),
    ...(opts.mirror ? { mirror: opts.mirror } : {}),
    ...(opts.onGrade ? { onProgress: opts.onGrade } : {}),
  });
  const verdicts = new Map(evalOutcome.results.map((r) => [`${r.task_id}\0${r.sample}`, r.verdict]));
  const count = (s: AgentRecord["status"]): number => records.filter((r) => r.status === s).length;
  const summary: AgentRunSummary = {
    model: opts.model,
    level,
    command: opts.command,
    ...(opts.preset ? { preset: opts.preset } : {}),
    timeout_s: opts.timeoutS,
    network: opts.network,
    samples: records.map((r, i) => ({
      task_id: r.task_id,
      sample: r.sample,
      status: r.status,
      ...(r.reason ? { reason: r.reason } : {}),
      backend: r.backend,
      exit_code: r.exit_code,
      wall_s: r.wall_s,
      changed: r.changed,
      ...(verdicts.has(`${r.task_id}\0${r.sample}`) ? { verdict: verdicts.get(`${r.task_id}\0${r.sample}`)! } : {}),
      files: inputs[i]!.out_dir,
    })),
    totals: {
      samples: records.length,
      ran: records.length - reused,
      reused,
      finished: count("finished"),
      timeout: count("timeout"),
      workspace_deleted: count("workspace-deleted"),
      infra: count("infra"),
    },
  };
  await writeJsonAtomic(join(agentRoot, AGENT_RUN_FILES.summary), summary);
  return { summary, eval: evalOutcome };
}

async function readRecord(dir: string): Promise<AgentRecord | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, AGENT_FILES.record), "utf8")) as AgentRecord;
  } catch {
    return undefined;
  }
}
