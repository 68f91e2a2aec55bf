import { formatProblem, type Problem } from "../core/errors.js";

/** Colour only on a TTY and when NO_COLOR is unset (https://no-color.org). */
export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  return Boolean(stream.isTTY) && !("NO_COLOR" in process.env && process.env.NO_COLOR !== "");
}

const codes = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;
export function paint(color: keyof typeof codes, text: string, stream: NodeJS.WriteStream = process.stdout): string {
  return useColor(stream) ? `\u001b[${codes[color]}m${text}\u001b[0m` : text;
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + "\n");
}

export function printProblems(problems: Problem[], stream: NodeJS.WriteStream = process.stderr): void {
  for (const p of problems) stream.write(formatProblem(p) + "\n");
}

/** Progress lines only on a TTY, so logs and CI stay clean. */
export function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\u001b[2K${text}`);
}
export function progressDone(): void {
  if (process.stderr.isTTY) process.stderr.write("\r\u001b[2K");
}
