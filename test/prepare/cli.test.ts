import { execa } from "execa";
import { copyFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "../source/git-fixture.js";
import { jsonData, jsonEnvelope } from "../helpers/run-cli.js";

afterAll(removeTempDirs);

// Runs the built CLI: build first with `npx tsc -p .`.
const root = join(import.meta.dirname, "..", "..");
const fixtures = join(import.meta.dirname, "fixtures");
const notebooks = join(root, "test", "fixtures", "notebooks");

function lmr(args: string[], cwd: string) {
  return execa("node", [join(root, "dist", "cli", "main.js"), ...args], { cwd, reject: false, env: { NO_COLOR: "1" } });
}

describe("lmr prepare extract", () => {
  it("--suggest prints params, returns and a manifest step without writing", async () => {
    const dir = await tempDir("cli");
    await copyFile(join(fixtures, "mcts.py"), join(dir, "mcts.py"));
    const r = await lmr(
      [
        "prepare",
        "extract",
        "mcts.py",
        "--within",
        "MCTS.search",
        "--start",
        "# selection",
        "--end",
        "path.append(node)",
        "--name",
        "select",
        "--as-method",
        "--suggest",
        "--json",
      ],
      dir,
    );
    expect(r.exitCode).toBe(0);
    expect(jsonEnvelope(String(r.stdout))).toMatchObject({ ok: true, command: "prepare extract" });
    expect(jsonData(String(r.stdout))).toEqual({
      params: ["node", "path"],
      returns: ["node"],
      start_line: 28,
      end_line: 37,
      step: {
        kind: "extract-function",
        file: "mcts.py",
        within: "MCTS.search",
        start: { anchor: "# selection" },
        end: { anchor: "path.append(node)" },
        name: "select",
        params: ["node", "path"],
        returns: ["node"],
        as_method: true,
      },
    });
    expect(await readFile(join(dir, "mcts.py"), "utf8")).toBe(await readFile(join(fixtures, "mcts.py"), "utf8"));
  });

  it("--suggest proposes main_guard for a script whose top-level code runs on import; --no-main-guard leaves it out", async () => {
    const dir = await tempDir("cli");
    await copyFile(join(fixtures, "layer_scores.py"), join(dir, "layer_scores.py"));
    const args = [
      "prepare",
      "extract",
      "layer_scores.py",
      "--start",
      "# one score per layer",
      "--end",
      "scores.append(",
      "--name",
      "layer_scores",
      "--suggest",
      "--json",
    ];
    const r = await lmr(args, dir);
    expect(r.exitCode).toBe(0);
    const out = jsonData(String(r.stdout));
    expect(out.runs_on_import).toEqual([
      [5, 13],
      [23, 38],
    ]);
    expect(out.step).toMatchObject({ kind: "extract-function", file: "layer_scores.py", name: "layer_scores", main_guard: true });
    const off = jsonData(String((await lmr([...args, "--no-main-guard"], dir)).stdout));
    expect(off.step).not.toHaveProperty("main_guard");
    const written = await lmr(
      [
        "prepare",
        "extract",
        "layer_scores.py",
        "--start",
        "# one score per layer",
        "--end",
        "scores.append(",
        "--name",
        "layer_scores",
        "--return",
        "scores",
        "--out",
        "out.py",
      ],
      dir,
    );
    expect(written.exitCode).toBe(0);
    expect(String(written.stderr)).toContain("main_guard is on (pass --no-main-guard to leave it)");
    expect(await readFile(join(dir, "out.py"), "utf8")).toBe(await readFile(join(fixtures, "layer_scores.guarded.expected.py"), "utf8"));
  });

  it("writes the transformed file with --out, using line numbers and explicit params", async () => {
    const dir = await tempDir("cli");
    const r = await lmr(
      [
        "prepare",
        "extract",
        join(fixtures, "train.py"),
        "--within",
        "main",
        "--start",
        "19",
        "--end",
        "summary = ",
        "--name",
        "ema_by_label",
        "--param",
        "rows,alpha",
        "--return",
        "counts",
        "--return",
        "summary",
        "--out",
        "out.py",
      ],
      dir,
    );
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("extracted lines 19-27 into ema_by_label (line 11 of out.py): counts, summary = ema_by_label(rows, alpha)");
    expect(await readFile(join(dir, "out.py"), "utf8")).toBe(await readFile(join(fixtures, "train.ema.expected.py"), "utf8"));
  });

  it("exits 2 with the file and the reason on a bad block, and on a missing --name", async () => {
    const dir = await tempDir("cli");
    const bad = await lmr(
      ["prepare", "extract", join(fixtures, "mcts.py"), "--within", "MCTS.search", "--start", "node = root", "--end", "log_n =", "--name", "x"],
      dir,
    );
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain(
      `lmr: ${join(fixtures, "mcts.py")}: lines 26-30 are not whole statements at one indentation level: line 30 is inside the \`while\` at lines 29-37 (hint: end the block at line 37 (after the whole \`while\`) or before line 29)`,
    );
    const noName = await lmr(["prepare", "extract", join(fixtures, "mcts.py"), "--within", "MCTS.search", "--start", "1", "--end", "2"], dir);
    expect(noName.exitCode).toBe(2);
    expect(noName.stderr).toContain("--name is required");
    const json = await lmr(
      ["prepare", "extract", join(fixtures, "mcts.py"), "--within", "Nope.search", "--start", "1", "--end", "2", "--name", "x", "--json"],
      dir,
    );
    expect(json.exitCode).toBe(2);
    expect(jsonEnvelope(String(json.stdout)).error).toMatchObject({
      code: "prepare/within-not-found",
      message: "no function or method 'Nope.search'; near matches: MCTS.search",
    });
  });
});

describe("lmr prepare notebook", () => {
  it("prints the module, or writes it with --out", async () => {
    const dir = await tempDir("cli");
    await copyFile(join(notebooks, "contrast.ipynb"), join(dir, "demo.ipynb"));
    const printed = await lmr(["prepare", "notebook", "demo.ipynb", "--cells", "0,1"], dir);
    expect(printed.exitCode).toBe(0);
    expect(String(printed.stdout).split("\n")[0]).toBe("# Generated by lmr from demo.ipynb, code cells 0, 1; IPython magics and shell lines removed.");
    const written = await lmr(["prepare", "notebook", "demo.ipynb", "--out", "demo_module.py", "--json"], dir);
    expect(jsonEnvelope(String(written.stdout))).toEqual({
      ok: true,
      command: "prepare notebook",
      data: { notebook: "demo.ipynb", out: "demo_module.py", cells: [0, 1, 2, 3, 4], dropped_lines: 6, dropped_cells: [2] },
    });
    expect(await readFile(join(dir, "demo_module.py"), "utf8")).toContain("# code cell 3\nfor e in");
    const bad = await lmr(["prepare", "notebook", "demo.ipynb", "--cells", "0,x"], dir);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("--cells '0,x'");
  });

  it("shows help with examples", async () => {
    const r = await lmr(["prepare", "extract", "--help"], root);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("$ lmr prepare extract core/mcts.py --within MCTS.search");
  });
});
