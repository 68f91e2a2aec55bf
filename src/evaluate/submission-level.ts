import { readFile, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { LmrError } from "../core/errors.js";
import { DEFAULT_LEVEL, isInstructionLevel, type InstructionLevel } from "../manifest/level.js";
import { isRecord } from "../run-folder/index.js";

/**
 * The level a run grades at: the flag's; else the level lmr generate recorded in generate.json
 * beside a submissions file; else paper. A flag that contradicts generate.json is bad input:
 * the run would record a level its submissions were not made at.
 */
export async function resolveSubmissionLevel(submissions: string, flag: InstructionLevel | undefined): Promise<InstructionLevel> {
  const recorded = await readGeneratedLevel(submissions);
  if (recorded && flag && recorded.level !== flag) {
    throw new LmrError({
      code: "eval/level-mismatch",
      file: recorded.file,
      pointer: "/level",
      message: `the submissions were generated at level '${recorded.level}' (generate.json), and --level says '${flag}'`,
      hint: `drop --level (the run takes '${recorded.level}' from generate.json), or generate again with --level ${flag}`,
    });
  }
  return flag ?? recorded?.level ?? DEFAULT_LEVEL;
}

async function readGeneratedLevel(submissions: string): Promise<{ level: InstructionLevel; file: string } | undefined> {
  const abs = resolve(submissions);
  const isFile = await stat(abs).then(
    (s) => s.isFile(),
    () => false,
  );
  if (!isFile) return undefined;
  const file = join(dirname(abs), "generate.json");
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, "utf8"));
  } catch {
    return undefined; // no generation beside it (or not ours): nothing recorded
  }
  if (!isRecord(value)) return undefined;
  return isInstructionLevel(value.level) ? { level: value.level, file } : undefined;
}
