import { createHmac, timingSafeEqual } from "node:crypto";
import { StringDecoder } from "node:string_decoder";
import { VALIDATORS, schemaCheck } from "../core/schema-validator.js";
import type { ImportedModule, LoadedModules, TestStatus } from "./types.js";

/** One test as the harness reported it. `raw_failed`: pytest itself counted it as failed. */
export interface HarnessResult {
  id: string;
  status: TestStatus;
  time_s: number;
  message: string | null;
  raw_failed: boolean;
}

/** Everything the results channel delivered, already authenticated. */
export interface ChannelState {
  hello?: { pid: number; python: string; executable: string };
  infra?: string;
  collectErrors: { id: string; message: string }[];
  collected?: string[];
  /** Test started but no result yet: the one a per-test watchdog waits on. */
  running?: string;
  results: HarnessResult[];
  junit?: string;
  /** Third-party modules the tree's and grader's code imported (only with reportImports). */
  imports?: ImportedModule[];
  /** Environment variables the run left set or unset (only with reportImports): what a fork server must import under. */
  envChanges?: EnvChanges;
  /** What a fork server must do to start where this run's tests started (only with reportImports). */
  loaded?: LoadedModules;
  /** The same for the candidates' server: what the code under test's side had loaded (only with reportImports). */
  candidateLoaded?: LoadedModules;
  candidateEnvChanges?: EnvChanges;
  /** Tests whose failure was the code under test failing to import in the candidate. */
  candidateImportErrors?: { id: string; module: string; missing: string | null; message: string }[];
  /** Per test, the traced files' executed lines (only with traceLines). */
  lines: Record<string, Record<string, number[]>>;
  done?: { exit: number; n_results: number; tampered: string[] };
  /** Why the channel cannot be trusted (bad MAC, gaps, duplicates, garbage). Empty when clean. */
  problems: string[];
}

const MAX_BYTES = 64 * 1024 * 1024;

/** Every authenticated record is checked against the one protocol both harnesses write. */
const followsProtocol = schemaCheck(VALIDATORS.harnessRecord);

const STATUSES: readonly string[] = ["passed", "failed", "error", "skipped"];

/**
 * Reads `<hmac-sha256 hex> <json>` lines from the harness. A line that does not
 * verify, a sequence gap or a record after `done` marks the channel untrusted:
 * only the harness holds the key, so anything else on the fd is the code under
 * test trying to speak for it.
 */
export class RecordReader {
  readonly state: ChannelState = { collectErrors: [], results: [], problems: [], lines: {}, candidateImportErrors: [] };
  private buf = "";
  private readonly decoder = new StringDecoder("utf8");
  private bytes = 0;
  private seq = 0;
  private readonly seen = new Set<string>();

  constructor(
    private readonly key: string,
    private readonly onRecord: (kind: string, state: ChannelState) => void = () => {},
  ) {}

  feed(chunk: Buffer | string): void {
    if (this.bytes > MAX_BYTES) return;
    this.bytes += chunk.length;
    if (this.bytes > MAX_BYTES) {
      this.problem(`results channel sent more than ${MAX_BYTES} bytes`);
      return;
    }
    this.buf += typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    let nl: number;
    while ((nl = this.buf.indexOf("\n")) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      this.readLine(line);
    }
  }

  /** Call at end of stream: a partial last line means the writer was cut off. */
  end(): void {
    this.buf += this.decoder.end();
    if (this.buf.length > 0) this.problem("results channel ended in the middle of a record");
    this.buf = "";
  }

  private problem(msg: string): void {
    if (this.state.problems.length < 20) this.state.problems.push(msg);
  }

  private readLine(line: string): void {
    const sp = line.indexOf(" ");
    const mac = sp > 0 ? line.slice(0, sp) : "";
    const body = sp > 0 ? line.slice(sp + 1) : "";
    const want = createHmac("sha256", this.key).update(body, "ascii").digest();
    const got = /^[0-9a-f]{64}$/.test(mac) ? Buffer.from(mac, "hex") : Buffer.alloc(0);
    if (got.length !== want.length || !timingSafeEqual(got, want)) {
      this.problem(`unauthenticated record on the results channel: ${JSON.stringify(line.slice(0, 120))}`);
      return;
    }
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(body) as Record<string, unknown>;
    } catch {
      this.problem("authenticated record is not JSON");
      return;
    }
    if (!followsProtocol(rec)) {
      // signed, so the harness wrote it: a harness fault, and nothing of it is believed
      this.problem(
        `record does not follow the harness protocol (schema/harness-record.schema.json): ${followsProtocol.firstError()} in ${JSON.stringify(body.slice(0, 160))}`,
      );
      if (typeof rec.seq === "number") this.seq = rec.seq + 1;
      return;
    }
    if (rec.seq !== this.seq) this.problem(`record out of sequence: expected ${this.seq}, got ${String(rec.seq)}`);
    this.seq = typeof rec.seq === "number" ? rec.seq + 1 : this.seq + 1;
    if (this.state.done) this.problem(`record ${String(rec.t)} after done`);
    this.apply(rec);
    this.onRecord(String(rec.t), this.state);
  }

  private apply(rec: Record<string, unknown>): void {
    const s = this.state;
    const str = (v: unknown): string => (typeof v === "string" ? v : "");
    switch (rec.t) {
      case "hello":
        s.hello = { pid: Number(rec.pid), python: str(rec.python), executable: str(rec.executable) };
        break;
      case "infra":
        s.infra = str(rec.reason);
        break;
      case "collect_error":
        s.collectErrors.push({ id: str(rec.id), message: str(rec.message) });
        break;
      case "collected":
        if (s.collected) this.problem("collection announced twice");
        s.collected = Array.isArray(rec.ids) ? rec.ids.map(String) : [];
        break;
      case "start":
        s.running = str(rec.id);
        break;
      case "result": {
        const id = str(rec.id);
        if (this.seen.has(id)) this.problem(`two results for ${id}`);
        this.seen.add(id);
        const status = STATUSES.includes(str(rec.status)) ? (rec.status as TestStatus) : "error";
        s.results.push({
          id,
          status,
          time_s: typeof rec.time_s === "number" ? rec.time_s : 0,
          message: typeof rec.message === "string" ? rec.message : null,
          raw_failed: rec.raw_failed === true,
        });
        if (s.running === id) delete s.running;
        break;
      }
      case "junit":
        s.junit = str(rec.xml);
        break;
      case "lines":
        s.lines[str(rec.id)] = readLines(rec.files);
        break;
      case "imports":
        s.imports = Array.isArray(rec.modules) ? rec.modules.flatMap(readImport) : [];
        s.envChanges = readEnvChanges(rec.env);
        if (typeof rec.server === "object" && rec.server !== null) s.loaded = readLoaded(rec.server as Record<string, unknown>);
        if (typeof rec.candidate_server === "object" && rec.candidate_server !== null)
          s.candidateLoaded = readLoaded(rec.candidate_server as Record<string, unknown>);
        if (rec.candidate_env !== undefined) s.candidateEnvChanges = readEnvChanges(rec.candidate_env);
        break;
      case "candidate_import_error":
        (s.candidateImportErrors ??= []).push({
          id: str(rec.id),
          module: str(rec.module),
          missing: typeof rec.missing === "string" ? rec.missing : null,
          message: str(rec.message),
        });
        break;
      case "done":
        s.done = {
          exit: Number(rec.exit),
          n_results: Number(rec.n_results),
          tampered: Array.isArray(rec.tampered) ? rec.tampered.map(String) : [],
        };
        break;
      default:
        this.problem(`unknown record kind ${JSON.stringify(rec.t)}`);
    }
  }
}

function readLoaded(v: Record<string, unknown>): LoadedModules {
  const names = (x: unknown): string[] => (Array.isArray(x) ? x.filter((n): n is string => typeof n === "string") : []);
  return { modules: names(v.modules), blocked: names(v.blocked), stand_ins: names(v.stand_ins) };
}

function readLines(v: unknown): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  if (typeof v !== "object" || v === null) return out;
  for (const [file, lines] of Object.entries(v as Record<string, unknown>)) {
    if (Array.isArray(lines)) out[file] = lines.filter((n): n is number => Number.isInteger(n));
  }
  return out;
}

const ORIGINS: readonly string[] = ["installed", "stand-in", "tree", "grader", "missing"];

function readImport(v: unknown): ImportedModule[] {
  if (typeof v !== "object" || v === null) return [];
  const r = v as Record<string, unknown>;
  if (typeof r.module !== "string" || typeof r.importer !== "string" || !ORIGINS.includes(String(r.origin))) return [];
  return [
    {
      module: r.module,
      importer: r.importer,
      origin: r.origin as ImportedModule["origin"],
      ...(typeof r.dist === "string" ? { dist: r.dist } : {}),
    },
  ];
}

/** Totals from the first <testsuite> element of a pytest JUnit file, for a cross-check. */
export function readJunitTotals(xml: string): { tests: number; failures: number; errors: number; skipped: number } | undefined {
  const m = /<testsuite\b([^>]*)>/.exec(xml);
  if (!m) return undefined;
  const attr = (name: string): number => {
    const a = new RegExp(`\\b${name}="(\\d+)"`).exec(m[1] ?? "");
    return a ? Number(a[1]) : 0;
  };
  return { tests: attr("tests"), failures: attr("failures"), errors: attr("errors"), skipped: attr("skipped") };
}

/** Variables a run set (with their values) and unset. */
interface EnvChanges {
  set: Record<string, string>;
  unset: string[];
}

function readEnvChanges(v: unknown): EnvChanges {
  const o = (typeof v === "object" && v !== null ? v : {}) as { set?: unknown; unset?: unknown };
  const set: Record<string, string> = {};
  if (typeof o.set === "object" && o.set !== null) for (const [k, val] of Object.entries(o.set)) if (typeof val === "string") set[k] = val;
  return { set, unset: Array.isArray(o.unset) ? o.unset.filter((x): x is string => typeof x === "string") : [] };
}
