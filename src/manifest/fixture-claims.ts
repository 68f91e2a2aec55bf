import { lstat, readdir, readFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { checkRelativePath } from "../core/paths.js";
import type { Finding } from "./schema-errors.js";
import { asObject } from "./semantic.js";
import { entryExists } from "../core/paths.js";

/*
 * Every file under a task's fixtures/ names what makes it: record.driver (fixtures/calls.json
 * and fixtures/calls.npz, through `lmr record`) or a committed script listed in
 * record.generators with the files it writes. That is what lets anyone regenerate a task's
 * fixtures (`lmr record`) and check them (`lmr record --check`). These are the manifest-side
 * checks; running drivers and generators is src/scaffold's job.
 */

const FIXTURES_DIR = "fixtures";
export const CALLS_FILE = "fixtures/calls.json";
export const ARRAYS_FILE = "fixtures/calls.npz";
/** What record.driver makes: calls.json always, calls.npz when a call holds arrays. */
const DRIVER_OUTPUTS = [CALLS_FILE, ARRAYS_FILE];
/** Files that keep an empty folder in git (`lmr new` writes fixtures/.gitkeep): not fixtures. */
const PLACEHOLDERS = new Set([".gitkeep", ".keep"]);
/** Fixture folders are small; this bounds a walk through one that is not. */
const MAX_WALK = 10_000;

/**
 * Whether a task without a `record` section must claim its fixtures too. False for now:
 * tasks made before record.generators existed (three in tasks/, every example in
 * examples/tasks) hold fixtures written by scripts that are not committed; they are
 * reported by `lmr record --check` (and verify) until they get generators, and this
 * becomes true then. A task that has `record` must account for every file.
 */
const CLAIMS_REQUIRED_WITHOUT_RECORD = false;

export interface FixtureClaim {
  /** Relative to the task folder. */
  file: string;
  /** "driver", or the generator's script. */
  by: string;
  /** JSON pointer of the manifest field that claims it. */
  pointer: string;
}

/** The fixture files the manifest says how to make, in manifest order. */
export function listFixtureClaims(data: unknown): FixtureClaim[] {
  const record = asObject(asObject(data)?.record);
  if (!record) return [];
  const out: FixtureClaim[] = [];
  if (typeof record.driver === "string") {
    for (const file of DRIVER_OUTPUTS) out.push({ file, by: "driver", pointer: "/record/driver" });
  }
  (Array.isArray(record.generators) ? record.generators : []).forEach((g, i) => {
    const gen = asObject(g);
    const script = typeof gen?.script === "string" ? gen.script : `/record/generators/${i}`;
    (Array.isArray(gen?.outputs) ? gen.outputs : []).forEach((o, j) => {
      if (typeof o === "string") out.push({ file: o, by: script, pointer: `/record/generators/${i}/outputs/${j}` });
    });
  });
  return out;
}

/** Files under TASK/fixtures/ (relative to the task folder, sorted), placeholders left out. */
export async function listFixtureFiles(taskDir: string): Promise<string[]> {
  const out: string[] = [];
  const queue = [FIXTURES_DIR];
  while (queue.length > 0 && out.length < MAX_WALK) {
    const rel = queue.shift()!;
    const entries = await readdir(join(taskDir, rel), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const child = posix.join(rel, entry.name);
      if (entry.isDirectory()) queue.push(child);
      else if (!PLACEHOLDERS.has(entry.name)) out.push(child);
    }
  }
  return out.sort();
}

/**
 * Placeholders under TASK/fixtures/ (.gitkeep, .keep) once the folder holds real fixtures:
 * then nothing makes them and graders still get them (they are fixture files to the build).
 */
export async function listStrayPlaceholders(taskDir: string): Promise<string[]> {
  const out: string[] = [];
  let others = 0;
  const queue = [FIXTURES_DIR];
  while (queue.length > 0 && out.length + others < MAX_WALK) {
    const rel = queue.shift()!;
    const entries = await readdir(join(taskDir, rel), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const child = posix.join(rel, entry.name);
      if (entry.isDirectory()) queue.push(child);
      else if (PLACEHOLDERS.has(entry.name)) out.push(child);
      else others++;
    }
  }
  return others > 0 ? out.sort() : [];
}

/**
 * Every finding of checkFixtureClaims: `lmr record` loads a task leniently about them,
 * since recording is how a missing output gets made (and the rest are the author's
 * work in progress, which validate reports).
 */
export const CLAIM_FINDINGS = new WeakSet<Finding>();

/**
 * The claims checks of one manifest: generator scripts exist; outputs sit under
 * fixtures/, are claimed once, are shipped to the grader (tests.fixtures) and exist; and no
 * file under fixtures/ is unclaimed.
 */
export async function checkFixtureClaims(data: unknown, taskDir: string): Promise<Finding[]> {
  const m = asObject(data);
  const record = asObject(m?.record);
  if (!record && !CLAIMS_REQUIRED_WITHOUT_RECORD) return [];
  const findings: Finding[] = [];
  for (const [i, g] of (Array.isArray(record?.generators) ? record.generators : []).entries()) {
    const script = asObject(g)?.script;
    if (typeof script !== "string" || checkRelativePath(script) !== undefined) continue;
    const info = await lstat(join(taskDir, script)).catch(() => undefined);
    if (!info?.isFile()) {
      findings.push({
        pointer: `/record/generators/${i}/script`,
        message: `'${script}' ${info ? "is not a regular file" : "does not exist in the task folder"}`,
        hint: "commit the generator script in the task folder (e.g. generators/make_cases.py); the path is relative to the task folder",
      });
    }
  }
  const shipped = (asObject(m?.tests)?.fixtures as unknown[] | undefined) ?? [];
  const covered = (f: string) => shipped.some((e) => typeof e === "string" && (e === f || f.startsWith(`${e.replace(/\/+$/, "")}/`)));
  const first = new Map<string, FixtureClaim>();
  for (const claim of listFixtureClaims(data)) {
    if (checkRelativePath(claim.file) !== undefined) continue; // the path checks report it
    const earlier = first.get(claim.file);
    if (earlier) {
      findings.push({
        pointer: claim.pointer,
        message: `'${claim.file}' is also made by ${earlier.by === "driver" ? "record.driver" : earlier.by} (${earlier.pointer})`,
        hint: "every fixture file has one maker: drop it from one of them",
      });
      continue;
    }
    first.set(claim.file, claim);
    if (claim.by === "driver") continue; // calls.npz exists only when a call holds arrays; the recording itself says
    if (!claim.file.startsWith(`${FIXTURES_DIR}/`)) {
      findings.push({
        pointer: claim.pointer,
        message: `'${claim.file}' is not under fixtures/`,
        hint: `generators write fixtures: write it as fixtures/${posix.basename(claim.file)}`,
      });
      continue;
    }
    if (!covered(claim.file)) {
      findings.push({
        pointer: claim.pointer,
        message: `'${claim.file}' is not in tests.fixtures, so graders never get it`,
        hint: `add "${claim.file}" (or "fixtures") to tests.fixtures`,
      });
    }
    if (!(await entryExists(join(taskDir, claim.file)))) {
      findings.push({
        pointer: claim.pointer,
        message: `'${claim.file}' does not exist: ${claim.by} has not been run`,
        hint: `run \`lmr record ${taskDir}\` to generate it`,
      });
    }
  }
  for (const file of await listFixtureFiles(taskDir)) {
    if (first.has(file)) continue;
    findings.push({
      pointer: record ? "/record" : "/tests/fixtures",
      message: `'${file}' is not made by record.driver or any record.generators entry`,
      hint: await unclaimedHint(taskDir, file),
    });
  }
  for (const file of await listStrayPlaceholders(taskDir)) {
    findings.push({
      pointer: record ? "/record" : "/tests/fixtures",
      message: `'${file}' is a placeholder left beside the recorded fixtures: no driver or generator makes it, yet graders get it`,
      hint: `delete ${file} (\`lmr record\` removes it when it writes the fixtures)`,
    });
  }
  for (const f of findings) CLAIM_FINDINGS.add(f);
  return findings;
}

/** How to claim a file: for a recording, the driver it names; else a generator entry. */
async function unclaimedHint(taskDir: string, file: string): Promise<string> {
  if (file === CALLS_FILE || file === ARRAYS_FILE) {
    const calls = await readFile(join(taskDir, CALLS_FILE), "utf8").then(
      (t) => asObject(JSON.parse(t)),
      () => undefined,
    );
    const driver = asObject(calls?.driver);
    if (typeof driver?.file === "string") return `it was recorded by ${driver.file}: set "record": {"driver": "${driver.file}"}`;
    if (driver && "code" in driver)
      return "it was recorded from --driver CODE: put the code in a file of the task (driver.py), set record.driver to it and run `lmr record` again";
    return "set record.driver to the driver that recorded it, or delete it";
  }
  return `commit the script that writes it and list it: "record": {"generators": [{"script": "generators/${posix.basename(file).replace(/\.[^.]*$/, "")}.py", "outputs": ["${file}"]}]}; or delete the file`;
}
