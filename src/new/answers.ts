import { execa } from "execa";
import { isLmrError, LmrError } from "../core/errors.js";
import type { Asker, NewEnv, NewFlags } from "./types.js";
import { parseCategory, parseMode, parseTaskId, parseText, parseUrl, parseYear } from "./choices.js";
import { classifyRepo } from "./upstream.js";

/*
 * How one answer is obtained: from its flag (checked, an error names the
 * flag), else from the person at the terminal (the same check re-asks), else
 * from a default, else it is missing: an error naming the flag.
 */

export function messageOf(err: unknown): string {
  if (isLmrError(err)) return err.hint ? `${err.message} (${err.hint})` : err.message;
  return err instanceof Error ? err.message : String(err);
}

/** A prompt validator from a parser that throws: undefined when the answer parses, else the message. */
export function validatorOf(parse: (raw: string) => unknown): (raw: string) => Promise<string | undefined> {
  return async (raw) => {
    try {
      await parse(raw);
      return undefined;
    } catch (err) {
      return messageOf(err);
    }
  };
}

function missingFlag(flags: string[]): LmrError {
  return new LmrError({
    code: "new/missing-flag",
    message: `missing ${flags.join(", ")}`,
    hint: "without a terminal (or with --yes) every required answer must be given as a flag; see `lmr new --help`",
  });
}

export interface Question<T> {
  flag: string;
  value: string | undefined;
  parse: (raw: string) => T | Promise<T>;
  /** Asks at the terminal; the answer still goes through `parse`. */
  prompt?: (ask: Asker) => Promise<string>;
  /** Used when neither the flag nor a person answers. */
  fallback?: () => T | undefined | Promise<T | undefined>;
}

export async function answer<T>(q: Question<T>, env: NewEnv): Promise<T> {
  if (q.value !== undefined) return q.parse(q.value);
  if (env.ask && q.prompt) return q.parse(await q.prompt(env.ask));
  const fallback = q.fallback ? await q.fallback() : undefined;
  if (fallback !== undefined) return fallback;
  throw missingFlag([q.flag]);
}

/** `git config user.name`, or undefined. */
export async function readGitUserName(cwd: string): Promise<string | undefined> {
  const r = await execa("git", ["config", "user.name"], { cwd, reject: false, env: { LC_ALL: "C" } });
  const name = String(r.stdout).trim();
  return r.exitCode === 0 && name !== "" ? name : undefined;
}

/** Major.minor of the interpreter lmr runs tests with ($LMR_PYTHON, else python3); "3.11" when it cannot be asked. */
export async function detectPythonVersion(): Promise<string> {
  const bin = process.env.LMR_PYTHON && process.env.LMR_PYTHON !== "" ? process.env.LMR_PYTHON : "python3";
  const r = await execa(bin, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { reject: false, timeout: 10_000 });
  const v = String(r.stdout ?? "").trim();
  return r.exitCode === 0 && /^3\.\d+$/.test(v) ? v : "3.11";
}

/**
 * With no one to ask: every required flag must be there, and the values that
 * need no look-up must be well formed. Runs before any git or file work, so
 * a bad command line fails at once.
 */
export async function checkFlagsOnly(flags: NewFlags, cwd: string): Promise<void> {
  const missing: string[] = [];
  const need = (value: string | undefined, flag: string): void => {
    if (value === undefined || value.trim() === "") missing.push(flag);
  };
  need(flags.paperTitle, "--paper-title");
  need(flags.paperUrl, "--paper-url");
  need(flags.year, "--year");
  need(flags.repo, "--repo");
  if (flags.repo !== undefined && classifyRepo(flags.repo, cwd).kind === "url") need(flags.commit, "--commit");
  need(flags.file, "--file");
  need(flags.symbol, "--symbol");
  need(flags.category, "--category");
  if (flags.mode !== undefined && flags.mode.trim().toLowerCase() === "region") {
    need(flags.regionStart, "--region-start");
    need(flags.regionEnd, "--region-end");
  }
  if (flags.author === undefined && (await readGitUserName(cwd)) === undefined) missing.push("--author");
  if (missing.length > 0) throw missingFlag(missing);
  parseText("--paper-title", flags.paperTitle!);
  parseUrl("--paper-url", flags.paperUrl!);
  if (flags.pdfUrl !== undefined) parseUrl("--pdf-url", flags.pdfUrl);
  parseYear(flags.year!);
  parseCategory(flags.category!);
  if (flags.mode !== undefined) parseMode(flags.mode);
  if (flags.id !== undefined) parseTaskId(flags.id);
}
