import type { RecordedTarget } from "../record/calls.js";

/** What the replay test template needs besides the recorded targets. */
export interface ReplayRenderInput {
  /** calls.json relative to the task folder (for the header). */
  fixture: string;
  /** calls.json relative to the test file's folder. */
  fixtureFromTest: string;
  targets: ReplayTarget[];
}

/** A recorded target and how its replay checks it. */
interface ReplayTarget extends RecordedTarget {
  /** The manifest target's record.check_mutations; default true. */
  check_mutations?: boolean;
}

const checksMutations = (t: ReplayTarget): boolean => t.check_mutations !== false;

/** Replaces every `{{KEY}}`; a placeholder without a value is a bug in the template. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{([A-Z_]+)\}\}/g, (whole, key: string) => {
    const v = values[key];
    if (v === undefined) throw new Error(`template placeholder ${whole} has no value`);
    return v;
  });
}

/** `OpenLoopMCTS.find_best_action` → `open_loop_mcts_find_best_action`; dunders lose their underscores. */
export function snakeName(symbol: string): string {
  return symbol
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toLowerCase();
}

function unique(base: string, taken: Set<string>): string {
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
  taken.add(name);
  return name;
}

/** The templates a replay test is made of. */
export interface ReplayTemplates {
  /** The file: header, tolerances, loading the toolkit helpers. */
  test: string;
  /** Appended per recorded target. */
  target: string;
  /** A note on record.skip_args (how to build a left-out argument), included when a target has them. */
  skipped: string;
}

/** Names the test template defines itself: a target's constant must not shadow them. */
const TEMPLATE_NAMES = ["Path", "pytest", "RTOL", "ATOL", "RECORDING", "assert_matches", "call_ids", "replay", "Recording", "Replayer"];

function countNote(t: RecordedTarget): string {
  const calls = (n: number) => `${n} call${n === 1 ? "" : "s"}`;
  const kind = t.kind === "function" ? "function" : t.kind;
  const recorded = t.calls_seen > t.calls_recorded ? `${t.calls_recorded} of ${calls(t.calls_seen)} recorded` : `${calls(t.calls_recorded)} recorded`;
  return `${kind}, ${recorded}${checksMutations(t) ? "" : "; in-place changes of arguments not checked"}`;
}

/** For the docstring: which targets skip the in-place checks, and why. */
function mutationsNote(targets: ReplayTarget[]): string {
  const unchecked = targets.filter((t) => !checksMutations(t)).map((t) => t.symbol);
  if (unchecked.length === 0) return "";
  const names = unchecked.join(", ");
  const which = unchecked.length === 1 ? "its target sets" : "their targets set";
  return `\n\nIn-place changes of arguments are not checked for ${names}: in task.json ${which}\n"record": {"check_mutations": false}, so the tests below pass check_mutations=False.`;
}

/**
 * The replay test file: the test template once, the target template per recorded target, and
 * a note on building left-out arguments when a target has record.skip_args.
 */
export function renderReplayTests(templates: ReplayTemplates, input: ReplayRenderInput): string {
  const consts = new Set<string>(TEMPLATE_NAMES);
  const tests = new Set<string>();
  const blocks = input.targets.map((t) =>
    fillTemplate(templates.target, {
      SYMBOL: t.symbol,
      FILE: t.file,
      COUNT: countNote(t),
      CONST: unique(snakeName(t.symbol).toUpperCase() || "TARGET", consts),
      FILE_LITERAL: JSON.stringify(t.file),
      SYMBOL_LITERAL: JSON.stringify(t.symbol),
      TEST_NAME: unique(snakeName(t.symbol) || "target", tests),
      REPLAY_OPTIONS: checksMutations(t) ? "" : ", check_mutations=False",
    }),
  );
  const skips = input.targets.some((t) => t.skip_args.length > 0);
  const source = fillTemplate(templates.test, {
    TARGETS: input.targets.map((t) => `${t.module}.${t.symbol}`).join(", "),
    FIXTURE: input.fixture,
    FIXTURE_FROM_HERE: input.fixtureFromTest,
    SKIPPED: skips ? templates.skipped : "",
    SUPPLY: "",
    MUTATIONS_NOTE: mutationsNote(input.targets),
    TESTS: blocks.join(""),
  });
  return source.replace(/\s+$/, "\n");
}
