import { JUDGE_CLASSES, compareIds, type SampleJudgement } from "../run-folder/index.js";
import { agreementOf } from "./stats.js";
import type { JudgeClassCounts, JudgeGroupSummary, ModelJudgeSummary, SampleJudgeSummary, SampleSummary, TaskSummary } from "./types.js";

export function summarizeJudgement(j: SampleJudgement): SampleJudgeSummary {
  const rationale = j.votes.find((v) => v.class !== undefined && v.class === j.majority)?.rationale;
  return {
    judge_model: j.judge_model,
    status: j.status,
    majority: j.majority,
    agreement: j.agreement,
    votes: j.votes.length,
    ...(rationale ? { rationale } : {}),
  };
}

/** The judge over some samples; undefined when none of them has a judgement (the run was not judged). */
export function summarizeJudgeGroup(samples: SampleSummary[]): JudgeGroupSummary | undefined {
  if (!samples.some((s) => s.judge !== undefined)) return undefined;
  const classes = Object.fromEntries(JUDGE_CLASSES.map((c) => [c, 0])) as JudgeClassCounts;
  const agreements: number[] = [];
  let judged = 0;
  let noCode = 0;
  let infra = 0;
  let unjudged = 0;
  for (const s of samples) {
    if (s.judge === undefined) {
      if (s.verdict !== "infra") unjudged++;
      continue;
    }
    if (s.judge.status === "no-code") noCode++;
    else if (s.judge.status === "infra") infra++;
    else {
      judged++;
      if (s.judge.majority) classes[s.judge.majority]++;
      if (s.judge.agreement !== null) agreements.push(s.judge.agreement);
    }
  }
  const mean = agreements.length === 0 ? null : Math.round((agreements.reduce((a, b) => a + b, 0) / agreements.length) * 1e6) / 1e6;
  return { judged, no_code: noCode, infra, unjudged, classes, mean_agreement: mean };
}

/** A model's judge summary, with the tests-vs-judge confusion counts and Cohen's kappa over its judged samples. */
export function summarizeModelJudge(tasks: TaskSummary[]): ModelJudgeSummary | undefined {
  const samples = tasks.flatMap((t) => t.results);
  const group = summarizeJudgeGroup(samples);
  if (!group) return undefined;
  const pairs = samples
    .filter((s) => s.judge?.status === "judged" && s.verdict !== "infra")
    .map((s) => ({ tests: s.verdict === "passed", judge: s.judge!.majority === "fully-correct" }));
  const models = [...new Set(samples.flatMap((s) => (s.judge ? [s.judge.judge_model] : [])))].sort(compareIds);
  return { ...group, judge_models: models, tests_vs_judge: agreementOf(pairs) };
}
