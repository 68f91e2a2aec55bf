import { execa } from "execa";

/** The interpreter tests run: $LMR_PYTHON, else python3 (as the toolkit does). */
function pythonBin(): string {
  const p = process.env.LMR_PYTHON;
  return p && p !== "" ? p : "python3";
}

/** Python's own verdict on a source: undefined when compile() accepts it, else the error. */
export async function compileError(source: string): Promise<string | undefined> {
  const r = await execa(pythonBin(), ["-c", "import sys\ncompile(sys.stdin.read(), '<extracted>', 'exec')"], { input: source, reject: false });
  return r.exitCode === 0 ? undefined : String(r.stderr);
}

/** Run a script with the given module source importable as `mod` (written to `dir/mod.py`). */
export async function runPython(script: string, cwd: string, args: string[] = []): Promise<string> {
  const r = await execa(pythonBin(), ["-c", script, ...args], { cwd, env: { PYTHONDONTWRITEBYTECODE: "1" } });
  return String(r.stdout);
}
