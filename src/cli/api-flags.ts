import { Option } from "commander";
import { LmrError } from "../core/errors.js";
import { INSTRUCTION_LEVELS } from "../manifest/level.js";

/** Reading flags, one copy for every command: errors name the flag and the fix (usage/*, exit 2). */

export function usage(flag: string, message: string, hint?: string): LmrError {
  return new LmrError({ code: "usage/bad-flag", pointer: flag, message, ...(hint ? { hint } : {}) });
}

/** A whole number >= min, or usage/bad-number naming the flag. */
export function int(value: string, flag: string, min: number): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < min) {
    throw new LmrError({
      code: "usage/bad-number",
      pointer: flag,
      message: `${flag} must be a whole number >= ${min}, got '${value}'`,
      hint: `e.g. ${flag} ${Math.max(min, 1)}`,
    });
  }
  return n;
}

/** int() for a flag that may be left out: undefined stays undefined. */
export function count(value: string | undefined, flag: string, min = 1): number | undefined {
  return value === undefined ? undefined : int(value, flag, min);
}

export function num(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < min || n > max) throw usage(flag, `${flag} must be a number in [${min}, ${max}], got '${value}'`);
  return n;
}

export function parsePrice(value: string): { prompt: number; completion: number } {
  const parts = value.split(",").map((p) => Number(p.trim()));
  if (parts.length !== 2 || parts.some((p) => !Number.isFinite(p) || p < 0))
    throw usage("--price", `--price must be two numbers IN,OUT (dollars per million tokens), got '${value}'`, "e.g. --price 0.15,0.60");
  return { prompt: parts[0]!, completion: parts[1]! };
}

export function parseBaseUrl(value: string | undefined): string {
  if (value === undefined) throw usage("--base-url", "--base-url is required", "e.g. --base-url https://api.openai.com/v1 or http://localhost:8000/v1");
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw usage("--base-url", `--base-url is not a URL: '${value}'`, "give the API root with its scheme, e.g. http://localhost:8000/v1");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw usage("--base-url", `--base-url must be http or https, got ${u.protocol}`);
  return value;
}

/** --api-key-env takes a variable's name; a key pasted there is refused without being echoed. */
export function checkKeyEnvName(name: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    throw usage(
      "--api-key-env",
      "--api-key-env takes the NAME of an environment variable (letters, digits, '_'); what was given is not one (and is not echoed here, in case it is a key)",
      "e.g. --api-key-env OPENAI_API_KEY, never the key itself",
    );
}

/** --level, shared by build, eval, generate, agent run and judge. */
export function levelOption(what: string): Option {
  return new Option(
    "--level <LEVEL>",
    `instruction level ${what}: paper (instruction.md: the contract, the method left to the paper) or hinted (hints.md: the method spelled out)`,
  ).choices(INSTRUCTION_LEVELS);
}
