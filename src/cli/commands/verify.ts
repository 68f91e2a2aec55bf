import type { Command } from "commander";
import { availableParallelism } from "node:os";
import { EXIT, LmrError } from "../../core/errors.js";
import { changedTasksSince, type ChangedTasks } from "../../source/changed-tasks.js";
import { findTaskDirs } from "../../manifest/load.js";
import { displayPath, resolveTaskDir } from "../../manifest/read.js";
import { hostChoiceFor, parseSandboxChoice } from "../../runner/backends.js";
import { STEP_NAMES, type MutantFateRow, type VerificationRecord } from "../../verify/record.js";
import { createRunSlots } from "../../verify/run-slots.js";
import type { VerifyEvent } from "../../verify/verify-task.js";
import { verifyTasks, type VerifiedTask, type VerifyTasksOptions } from "../../verify/verify-tasks.js";
import { action } from "../action.js";
import { count } from "../api-flags.js";
import { paint, printJsonFailed, printJsonOk, progress, progressDone } from "../output.js";

interface VerifyFlags {
  tasksDir: string;
  runs?: string;
  mutants?: string;
  minKillRatio?: string;
  minAlternatives?: string;
  mirror?: string;
  python?: string;
  sandbox: string;
  jobs?: string;
  tasksAtOnce?: string;
  force?: boolean;
  write: boolean;
  keep?: boolean;
  datasetScan: boolean;
  fastMutants: boolean;
  forkServer: boolean;
  changedSince?: string;
  draft?: boolean;
  listMutants?: boolean;
  json?: boolean;
}

export function registerVerify(program: Command): void {
  program
    .command("verify")
    .description("prove tasks sound: reference passes, stub fails in a test, mutants are killed, nothing leaks")
    .argument("[TASK_DIR...]", "task folders; default: every task under --tasks-dir")
    .option("--tasks-dir <DIR>", "folder whose subfolders are tasks", "tasks")
    .option("--runs <N>", "reference and stub runs (default: the manifest's verification.runs, else 3)")
    .option(
      "--mutants <K>",
      "mutants of the reference to run, 0 to skip, 'all' for every mutant the generator makes (then listed with their fates, as --list-mutants); default: manifest, else 20",
    )
    .option("--min-kill-ratio <R>", "share of mutants the tests must kill (default: manifest, else 0.8)")
    .option("--min-alternatives <N>", "alternatives/ solutions that must exist and pass (default: manifest, else 2)")
    .option("--mirror <DIR>", "local mirror of github.com repositories; default $LMR_MIRROR")
    .option("--python <PATH>", "Python interpreter to run the tests with; default $LMR_PYTHON, else python3")
    .option("--sandbox <MODE>", "auto | docker | bwrap | none (auto: docker where the task's image is built, else bwrap, else none)", "auto")
    .option(
      "-j, --jobs <N>",
      "test runs at once, shared by the tasks being verified (reference, stub, alternatives, mutants, fixtures; default: the CPU count + 2, since runs also wait on process starts and copies)",
    )
    .option("--tasks-at-once <N>", "tasks verified side by side, so one task's builds, first runs and leak scan overlap another's runs (default: 3)")
    .option(
      "--changed-since <REF>",
      "only the tasks whose inputs changed between git revision REF and the working tree (the task folder, its local upstream, tasks over the same upstream; see below)",
    )
    .option(
      "--draft",
      "a task still being written: every step but the finished-instruction check (TODO(author) markers); always runs, never writes verification.json",
    )
    .option("--list-mutants", "print every mutant with its fate: killed (by which test), survived, reached by no test, or declared equivalent")
    .option("--force", "verify even when verification.json records the same inputs")
    .option("--no-write", "do not write verification.json")
    .option("--keep", "keep the bundle and print the command that reruns the reference's tests by hand")
    .option("--no-fast-mutants", "the old path: every stub and mutant run is a fresh process running the whole suite")
    .option("--no-fork-server", "keep the fast mutant path but start a fresh process for every stub and mutant run")
    .option("--no-dataset-scan", "scan each workspace only against its own reference, not those of sibling tasks")
    .option("--json", "print the verification records as JSON")
    .addHelpText(
      "after",
      `
Steps, per task: manifest → build (upstream, prepare, mask, workspace.remove) →
fixtures regenerate byte for byte → reference passes all N runs (a test that
changes outcome between runs is reported as flaky; a missing module is an
infrastructure failure naming it) → environment declares every third-party module
the code and tests import → stub fails N times inside a test (not only at
import/collection) → every solution under alternatives/ passes (at least
min_alternatives) → mutants of the reference are killed (kill ratio ≥ threshold) →
leak scan of the workspace against this task's reference and those of the other
tasks over the same upstream in the same folder (definitions sharing a target's
name are listed for review).
The record goes to <task>/verification.json. A task whose last record passed, with
the same inputs (task.json with its upstream commit, instruction, paper text, tests,
fixtures; a local upstream folder without a commit), settings and toolkit version,
is reported as unchanged and not re-run unless --force. Progress goes to stderr on
a terminal only; with --json, stdout holds only the JSON.
--changed-since REF keeps the tasks (named, or under --tasks-dir) whose inputs
differ between REF and the working tree (committed, staged, unstaged and untracked
files): a file under the task folder (verification.json included), a file under
its local upstream folder (a folder outside the repository always counts), and,
with the dataset scan, a task over the same upstream as such a task (its leak scan
reads that task's reference). No task changed: nothing to verify, exit 0.
--draft is for a task still being written: the instruction may hold TODO(author)
markers, every other step runs and prints, and no record is written.
Exit codes: 0 all verified, 1 a task failed verification (an invalid manifest
included), 2 bad usage, an unknown --changed-since revision or unreadable
task.json, 3 only infrastructure failures.

Examples:
  $ lmr verify examples/tasks/pref-loss
  $ lmr verify --tasks-dir tasks --mirror /data/mirror --runs 3 --mutants 30 --json
  $ lmr verify tasks/dpo-preference-loss --keep   # then run the printed command
  $ lmr verify --changed-since origin/main --force --no-write
  $ lmr verify tasks/my-new-task --draft --mutants all`,
    )
    .action(action(runVerify));
}

/** --mutants: a count, or 'all' (every mutant the generator makes). */
function mutantCount(value: string | undefined): number | "all" | undefined {
  if (value?.trim().toLowerCase() === "all") return "all";
  if (value !== undefined && !/^\s*\d+\s*$/.test(value)) {
    throw new LmrError({
      code: "usage/bad-number",
      message: `--mutants must be a whole number >= 0 or 'all', got '${value}'`,
      hint: "e.g. --mutants 20, or --mutants all to list every mutant",
    });
  }
  return count(value, "--mutants", 0);
}

function ratio(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const r = Number(value);
  if (value.trim() === "" || !(r >= 0 && r <= 1))
    throw new LmrError({ code: "usage/bad-ratio", message: `--min-kill-ratio must be between 0 and 1, got '${value}'`, hint: "e.g. --min-kill-ratio 0.8" });
  return r;
}

async function runVerify(taskDirs: string[], flags: VerifyFlags): Promise<number> {
  const given = taskDirs.length > 0 ? taskDirs : await findTaskDirs(flags.tasksDir);
  if (given.length === 0) {
    throw new LmrError({ code: "usage/no-tasks", file: flags.tasksDir, message: "no task folders found", hint: "pass task folders or --tasks-dir" });
  }
  const runs = count(flags.runs, "--runs", 1);
  const mutants = mutantCount(flags.mutants);
  const minKillRatio = ratio(flags.minKillRatio);
  const minAlternatives = count(flags.minAlternatives, "--min-alternatives", 0);
  // Measured on 2 cores, the 34-task dataset cold (--force): -j 2 / 2 tasks kept the cores 66 % busy
  // and took 566 s; -j 4 / 3 tasks 78 % and 478 s; -j 6 / 4 tasks 468 s. Same outcomes in all three.
  const jobs = count(flags.jobs, "--jobs", 1) ?? Math.max(2, availableParallelism()) + 2;
  const tasksAtOnce = count(flags.tasksAtOnce, "--tasks-at-once", 1) ?? 3;
  const opts: VerifyTasksOptions = {
    ...(runs !== undefined ? { runs } : {}),
    ...(mutants !== undefined ? { mutants } : {}),
    ...(minKillRatio !== undefined ? { minKillRatio } : {}),
    ...(minAlternatives !== undefined ? { minAlternatives } : {}),
    jobs,
    slots: createRunSlots(jobs),
    ...(flags.mirror ? { mirror: flags.mirror } : {}),
    ...(flags.python ? { python: flags.python } : {}),
    sandbox: await hostChoiceFor(parseSandboxChoice(flags.sandbox), flags.python),
    // a draft is checked for its author: it always runs and never leaves a record
    force: (flags.force ?? false) || flags.draft === true,
    write: flags.write && flags.draft !== true,
    ...(flags.draft ? { draft: true } : {}),
    ...(flags.listMutants || mutants === "all" ? { listMutants: true } : {}),
    keep: flags.keep ?? false,
    fastMutants: flags.fastMutants,
    forkServer: flags.forkServer,
    tasksAtOnce,
    datasetScan: flags.datasetScan,
  };
  let changed: ChangedTasks | undefined;
  let dirs = given;
  if (flags.changedSince !== undefined) {
    changed = await changedTasksSince(given, flags.changedSince, { siblings: flags.datasetScan });
    dirs = changed.changed.map((c) => c.dir);
    if (!flags.json) process.stdout.write(describeChanged(changed));
    if (dirs.length === 0) {
      if (flags.json) printJsonOk("verify", { tasks: [], changed_since: changedJson(changed) });
      return EXIT.ok;
    }
  }
  const board = new ProgressBoard(dirs.length);
  const { tasks, problems } = await verifyTasks(dirs, {
    ...opts,
    onEvent: (e) => board.update(e),
    onTaskDone: (id) => board.finish(id),
    onResult: (r) => {
      if (!flags.json) board.print(describeOne(r, opts));
    },
  }).finally(progressDone);
  const records = tasks.map((t) => ({ ...t.record, unchanged: t.unchanged, ...(t.kept ? { kept: t.kept } : {}) }));
  const failed = records.filter((r) => !r.ok);
  // exit 3 only when every failure is the toolkit's (no interpreter, no sandbox): nothing was learned about the tasks
  const infra = failed.length > 0 && failed.every((r) => r.failure?.kind === "infra");
  if (flags.json) {
    const data = {
      tasks: records,
      ...(problems.length > 0 ? { problems } : {}),
      ...(changed ? { changed_since: changedJson(changed) } : {}),
      ...(opts.draft ? { draft: true } : {}),
    };
    if (failed.length === 0) printJsonOk("verify", data);
    else
      printJsonFailed(
        "verify",
        new LmrError({
          code: infra ? "verify/infra" : "verify/failed",
          message: `${failed.length} of ${records.length} tasks failed verification: ${failed.map((r) => r.task_id).join(", ")}`,
          hint: "see data.tasks[].failure",
        }),
        data,
      );
  } else
    process.stdout.write(
      `${records.length - failed.length}/${records.length} tasks verified${opts.draft ? " as drafts (nothing written; run lmr verify without --draft once the instruction is finished)" : ""}\n`,
    );
  if (failed.length === 0) return EXIT.ok;
  return infra ? EXIT.infra : EXIT.check;
}

/** What --changed-since chose, before the results. */
function describeChanged(c: ChangedTasks): string {
  const n = c.changed.length;
  const total = n + c.unchanged.length;
  const lines = [`changed since ${c.ref} (${c.commit.slice(0, 12)}): ${n} of ${total} task${total === 1 ? "" : "s"}${n === 0 ? ", nothing to verify" : ""}`];
  for (const t of c.changed) lines.push(`  ${displayPath(resolveTaskDir(t.dir))}: ${t.reason}`);
  return lines.join("\n") + "\n";
}

function changedJson(c: ChangedTasks): { ref: string; commit: string; changed: { task: string; reason: string }[]; unchanged: string[] } {
  return {
    ref: c.ref,
    commit: c.commit,
    changed: c.changed.map((t) => ({ task: displayPath(resolveTaskDir(t.dir)), reason: t.reason })),
    unchanged: c.unchanged.map((d) => displayPath(resolveTaskDir(d))),
  };
}

/** One task's result as the terminal shows it: the verdict line, then what to look at. */
function describeOne(result: VerifiedTask, opts: VerifyTasksOptions): string {
  let text = describe(result.record, result.unchanged, displayPath(resolveTaskDir(result.dir)), result.written, opts.draft === true) + "\n";
  if (result.rerunReason) text += `  verified again: ${result.rerunReason}\n`;
  if (result.reproduced) text += "  reproduced: this run matches every claim of the committed record, left as it is\n";
  if (result.reproducedAt) text += `  reproduced on this machine at ${result.reproducedAt}\n`;
  for (const w of result.warnings ?? []) text += `  ${paint("yellow", "warning")}: ${w}\n`;
  for (const note of result.draftNotes) text += `  ${note}\n`;
  if (opts.listMutants) text += mutantTable(result.record);
  if (result.kept) text += `  kept: ${result.kept.bundle}\n  rerun the reference's tests by hand:\n    ${result.kept.command}\n`;
  return text;
}

/**
 * One progress line on a terminal for the tasks in flight: how many are done, and
 * each running task's step and bar. Finished results print above it.
 */
class ProgressBoard {
  private readonly active = new Map<string, VerifyEvent>();
  private done = 0;

  constructor(private readonly total: number) {}

  update(e: VerifyEvent): void {
    this.active.set(e.task, e);
    this.draw();
  }

  finish(task: string | undefined): void {
    if (task !== undefined) this.active.delete(task);
    this.done++;
    this.draw();
  }

  print(text: string): void {
    progressDone();
    process.stdout.write(text);
    this.draw();
  }

  private draw(): void {
    if (this.active.size === 0) return progressDone();
    // a pseudo-terminal may report 0 columns
    const width = process.stderr.columns || 160;
    const parts = [...this.active.values()].map((e) => {
      const bar = e.done !== undefined && e.total ? ` ${"#".repeat(Math.round((10 * e.done) / e.total)).padEnd(10, ".")}` : "";
      return `${e.task} ${e.step}${bar}${this.active.size === 1 ? ` ${e.message}` : ""}`;
    });
    progress(`[${this.done}/${this.total} done] ${parts.join(" | ")}`.slice(0, Math.max(20, width - 1)));
  }
}

/** Every mutant with its fate, one line each: what --mutants all and --list-mutants print. */
export function mutantTable(r: VerificationRecord): string {
  const m = r.steps.mutants;
  const rows = m.fates;
  if (!rows) return m.skipped ? "" : `  mutants: no list (${m.reason ?? "the step did not run"})\n`;
  if (rows.length === 0) return "  mutants: none could be made\n";
  const count = (f: MutantFateRow["fate"]): number => rows.filter((x) => x.fate === f).length;
  const fateText = (x: MutantFateRow): string =>
    x.fate === "killed"
      ? `killed by ${x.killer ?? "a failing run (no test named)"}`
      : x.fate === "survived"
        ? "SURVIVED"
        : x.fate === "uncovered"
          ? "SURVIVED, reached by no test"
          : `equivalent: ${x.reason ?? ""}`;
  const idWidth = Math.max(...rows.map((x) => x.id.length));
  const descWidth = Math.min(60, Math.max(...rows.map((x) => x.description.length)));
  const cut = (s: string): string => (s.length <= descWidth ? s.padEnd(descWidth) : `${s.slice(0, descWidth - 1)}…`);
  const head = `  mutants of ${r.task_id}: ${rows.length} — ${count("killed")} killed, ${count("survived")} survived, ${count("uncovered")} reached by no test, ${count("equivalent")} equivalent`;
  return [head, ...rows.map((x) => `    ${x.id.padEnd(idWidth)}  ${cut(x.description)}  ${fateText(x)}`)].join("\n") + "\n";
}

function describe(r: VerificationRecord, unchanged: boolean, where: string, written: boolean, draft = false): string {
  if (r.failure?.step === "manifest") {
    const problems = r.steps.manifest.problems ?? [];
    return [`${paint("red", "✗")} ${r.task_id} — failed at manifest: ${problems.length} problem(s)`, ...problems.map((p) => `  ${p}`)].join("\n");
  }
  const ref = r.steps.reference.runs.filter((x) => x.status === "passed").length;
  const stub = r.steps.stub.runs.filter((x) => x.status === "failed").length;
  const mut = r.steps.mutants;
  const leaks = r.steps.leaks.leaks;
  const allowed = leaks.filter((l) => l.allowed).length;
  const alts = r.steps.alternatives;
  const altPassed = alts.alternatives.filter((a) => a.status === "passed").length;
  const fx = r.steps.fixtures;
  const figures = [
    fx.skipped ? "fixtures not checked" : fx.ok ? (fx.files?.length ? `fixtures identical (${fx.files.length})` : "no fixtures") : "fixtures differ",
    r.steps.reference.skipped ? "reference not run" : `reference ${ref}/${r.steps.reference.runs.length} pass`,
    r.steps.stub.skipped ? "stub not run" : `stub ${stub}/${r.steps.stub.runs.length} fail in-test`,
    alts.skipped ? "alternatives not run" : `alternatives ${altPassed}/${alts.alternatives.length} pass`,
    mut.skipped
      ? "mutants not run"
      : `mutants ${mut.killed}/${mut.total} killed${mut.uncovered?.length ? ` (${mut.uncovered.length} reached by no test)` : ""}`,
    r.steps.leaks.skipped ? "leaks not scanned" : `leaks ${leaks.length - allowed}${allowed > 0 ? ` (+${allowed} allowed)` : ""}`,
  ].join(", ");
  const notes = reviewNotes(r);
  if (r.ok)
    return [
      `${paint("green", "✓")} ${r.task_id} ${unchanged ? "(unchanged since last verification) " : ""}${draft ? "(draft, not recorded) " : ""}— ${figures}`,
      ...notes,
    ].join("\n");
  const lines = [
    `${paint("red", "✗")} ${r.task_id} — failed at ${r.failure?.step}${r.failure?.kind === "infra" ? " (infrastructure)" : ""}: ${r.failure?.reason}`,
    `  ${figures}`,
  ];
  for (const s of STEP_NAMES) {
    const step = r.steps[s];
    if (!step.ok && !step.skipped && s !== r.failure?.step) lines.push(`  also ${s}: ${step.reason}`);
  }
  lines.push(...notes);
  if (written) lines.push(`  (record: ${where}/verification.json)`);
  return lines.join("\n");
}

/** What a reviewer should look at even when the task passed: removed paths and same-named definitions. */
function reviewNotes(r: VerificationRecord): string[] {
  const out: string[] = [];
  for (const e of r.steps.leaks.removed ?? []) if (e.reason === "manifest") out.push(`  removed ${e.path}: ${e.why ?? ""}`);
  for (const e of r.steps.mutants.equivalent ?? []) out.push(`  equivalent: ${e.description} — ${e.reason}`);
  for (const u of r.steps.mutants.uncovered ?? []) out.push(`  uncovered: ${u.description} — no test executes this line on the reference`);
  const review = r.steps.leaks.review ?? [];
  if (review.length > 0) {
    const shown = review
      .slice(0, 5)
      .map((x) => `${x.file}:${x.line} ${x.name}`)
      .join(", ");
    out.push(`  review: ${review.length} definition(s) elsewhere share a target's name (${shown}${review.length > 5 ? ", …" : ""})`);
  }
  return out;
}
