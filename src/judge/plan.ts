import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { BUNDLE_FILES, type BundleManifest } from "../bundle/index.js";
import { LmrError, isLmrError, type Problem } from "../core/errors.js";
import { sha256 } from "../core/hash.js";
import type { PromptTemplates } from "../generate/prompt.js";
import { hashPrompt } from "../llm/cache.js";
import type { LoadedRun } from "../report/read-run.js";
import { BUNDLES_DIR, DIFF_FILE, JUDGE_FILE_VERSION, RESULTS_DIR, RUN_FILE, compareIds, locateSample, type SampleResult } from "../run-folder/index.js";
import { buildJudgePrompt, type JudgePrompt } from "./prompt.js";

/** One sample to judge (or to record as having no code), with its prompt and resume key. */
export interface Planned {
  result: SampleResult;
  rel: string;
  kind: "judge" | "no-code";
  prompt?: JudgePrompt;
  promptHash?: string;
  judgeKey: string;
}

export interface JudgePlan {
  planned: Planned[];
  /** Samples with a result.json. */
  samples: number;
  notGraded: number;
  unjudgeable: number;
  problems: Problem[];
}

export interface PlanOptions {
  model: string;
  votes: number;
  maxPromptTokens: number;
  templates: PromptTemplates;
  parameters: (vote: number) => Record<string, unknown>;
  /** The instruction of a task at another level than the run's bundles hold (lmr judge --level). */
  instructionFor?: (taskId: string) => Promise<string>;
}

/**
 * What to do with each sample of a run: infra results are not judged; an
 * invalid one without a diff gets a no-code judgement; one with code gets its
 * prompt (the bundle's reference, the diff applied to the masked file). A
 * sample that cannot be judged (no diff, no bundle, a diff that does not
 * apply) is a problem naming it, never dropped silently.
 */
export async function planJudgements(runDir: string, loaded: LoadedRun, opts: PlanOptions): Promise<JudgePlan> {
  const problems: Problem[] = [];
  const results = [...loaded.results].sort((a, b) => compareIds(a.model, b.model) || compareIds(a.task_id, b.task_id) || compareIds(a.sample, b.sample));
  const planned: Planned[] = [];
  let notGraded = 0;
  let unjudgeable = 0;
  const bundles = new Map<string, BundleManifest | undefined>();
  for (const result of results) {
    if (result.verdict === "infra") {
      notGraded++;
      continue;
    }
    const rel = loaded.layout >= 2 ? locateSample(result) : `${RESULTS_DIR}/${result.task_id}/${result.sample}`;
    const diff = await readFile(join(runDir, rel, DIFF_FILE), "utf8").catch(() => undefined);
    const base = { judge_model: opts.model, submission_hash: result.submission_hash, votes: opts.votes, version: JUDGE_FILE_VERSION };
    if (diff === undefined) {
      if (result.verdict === "invalid") {
        planned.push({ result, rel, kind: "no-code", judgeKey: sha256(JSON.stringify({ ...base, kind: "no-code" })) });
        continue;
      }
      unjudgeable++;
      problems.push({
        file: join(runDir, rel),
        message: `no ${DIFF_FILE}: graded by an lmr that did not keep the applied submission`,
        hint: "run lmr eval on this run folder again (with this lmr), then lmr judge",
      });
      continue;
    }
    if (!bundles.has(result.task_id)) bundles.set(result.task_id, await readBundle(runDir, result.task_id));
    const bundle = bundles.get(result.task_id);
    if (!bundle) {
      unjudgeable++;
      problems.push({
        file: join(runDir, BUNDLES_DIR, result.task_id, BUNDLE_FILES.manifest),
        message: `the task's bundle is missing or unreadable, so the reference for ${rel} is unknown`,
        hint: "run lmr eval on this run folder again: it rebuilds the bundles",
      });
      continue;
    }
    let prompt: JudgePrompt;
    try {
      const instruction = opts.instructionFor ? await opts.instructionFor(result.task_id) : undefined;
      prompt = await buildJudgePrompt({
        taskId: result.task_id,
        bundleDir: join(runDir, BUNDLES_DIR, result.task_id),
        targets: bundle.targets,
        diff,
        maxPromptTokens: opts.maxPromptTokens,
        templates: opts.templates,
        ...(instruction !== undefined ? { instruction } : {}),
      });
    } catch (err) {
      if (!isLmrError(err) || err.code === "judge/prompt-too-long") throw err;
      unjudgeable++;
      problems.push({ file: join(runDir, rel, DIFF_FILE), message: err.message, ...(err.hint ? { hint: err.hint } : {}) });
      continue;
    }
    const promptHash = hashPrompt(prompt.messages);
    planned.push({
      result,
      rel,
      kind: "judge",
      prompt,
      promptHash,
      judgeKey: sha256(JSON.stringify({ ...base, prompt: promptHash, parameters: Array.from({ length: opts.votes }, (_, v) => opts.parameters(v)) })),
    });
  }
  return { planned, samples: results.length, notGraded, unjudgeable, problems };
}

/** The run folder itself, before its lock is taken: a folder that is not one is a usage error naming run.json. */
export async function checkRunDir(runDir: string): Promise<string> {
  const ok = await stat(join(runDir, RUN_FILE)).then(
    (s) => s.isFile(),
    () => false,
  );
  if (!ok)
    throw new LmrError({
      code: "report/not-a-run",
      message: `not a run folder: ${RUN_FILE} is missing`,
      file: join(runDir, RUN_FILE),
      hint: "pass the folder `lmr eval` wrote (it holds run.json and results/)",
    });
  return runDir;
}

async function readBundle(runDir: string, taskId: string): Promise<BundleManifest | undefined> {
  try {
    const m = JSON.parse(await readFile(join(runDir, BUNDLES_DIR, taskId, BUNDLE_FILES.manifest), "utf8")) as BundleManifest;
    return Array.isArray(m.targets) ? m : undefined;
  } catch {
    return undefined;
  }
}
