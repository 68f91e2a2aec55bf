import { createHash } from "node:crypto";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskManifest } from "../../src/manifest/types.js";
import { git, makeTempDir, removeTempDirs, writeFiles } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { buildPdf } from "./pdf-writer.js";

/*
 * The flow a contributor followed for a 2025 paper outside the dataset (issue 27, trap 1):
 * `lmr new --paper-pdf FILE` with an arXiv link without a version. Here over an upstream of
 * our own (a small git repository served as github.com/ourlab/muon-mini by a local mirror,
 * holding a Python function and a tiny PDF we generate), so nothing reaches the network.
 */

const PAPER_TITLE = "Muon is Scalable for LLM Training";
const PDF = buildPdf([
  ["Muon is Scalable for LLM Training", "1 Introduction", "We orthogonalize momentum with a Newton-Schulz iteration."],
  ["2 Method", "The update is the orthogonalized momentum, scaled by its shape.      (3)"],
]);
const SHA = createHash("sha256").update(PDF).digest("hex");
const MUON_PY = `"""A tiny optimizer step of our own, for lmr's tests."""


def newton_schulz(matrix, steps=5):
    """Approximately orthogonalize a 2x2 matrix given as nested lists."""
    a, b, c = 3.4445, -4.7750, 2.0315
    x = [row[:] for row in matrix]
    norm = sum(v * v for row in x for v in row) ** 0.5 + 1e-7
    x = [[v / norm for v in row] for row in x]
    for _ in range(steps):
        xxt = [[sum(x[i][k] * x[j][k] for k in range(2)) for j in range(2)] for i in range(2)]
        poly = [[b * xxt[i][j] + c * sum(xxt[i][k] * xxt[k][j] for k in range(2)) for j in range(2)] for i in range(2)]
        x = [[a * x[i][j] + sum(poly[i][k] * x[k][j] for k in range(2)) for j in range(2)] for i in range(2)]
    return x
`;

afterAll(removeTempDirs);

interface Walkthrough {
  root: string;
  mirror: string;
  commit: string;
  env: Record<string, string>;
}

async function setUp(): Promise<Walkthrough> {
  const root = await makeTempDir("muon");
  await writeFile(join(root, "package.json"), "{}\n");
  const mirror = join(root, "mirror");
  const upstream = join(mirror, "ourlab+muon-mini");
  await writeFiles(upstream, { "muon.py": MUON_PY, "docs/muon.pdf": PDF, "README.md": "Muon, small.\n" });
  await git(upstream, "init", "-q");
  await git(upstream, "add", "-A");
  await git(upstream, "commit", "-q", "-m", "muon-mini");
  await writeFile(join(root, "muon.pdf"), PDF);
  const env = { LMR_CACHE: join(root, "cache"), LMR_MIRROR: mirror, LMR_ARXIV_BASE: "http://127.0.0.1:9/pdf/" };
  return { root, mirror, commit: await git(upstream, "rev-parse", "HEAD"), env };
}

function newFlags(w: Walkthrough, extra: Record<string, string | undefined>): string[] {
  const flags: Record<string, string | undefined> = {
    "--paper-title": PAPER_TITLE,
    "--paper-url": "https://arxiv.org/abs/2502.16982",
    "--year": "2025",
    "--repo": "https://github.com/ourlab/muon-mini",
    "--commit": w.commit,
    "--file": "muon.py",
    "--symbol": "newton_schulz",
    "--category": "training objectives",
    "--license": "MIT",
    "--author": "Test Author",
    ...extra,
  };
  return ["new", "--yes", ...Object.entries(flags).flatMap(([k, v]) => (v === undefined ? [] : [k, v]))];
}

async function listTaskFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

async function manifestOf(dir: string): Promise<TaskManifest> {
  return JSON.parse(await readFile(join(dir, "task.json"), "utf8")) as TaskManifest;
}

async function validate(w: Walkthrough, dir: string): Promise<{ exitCode: number; problems: { pointer: string; message: string; hint: string | null }[] }> {
  const r = await runCli(["validate", dir, "--json"], { cwd: w.root, env: w.env });
  return { exitCode: r.exitCode, problems: (jsonData(r.stdout) as { problems: { pointer: string; message: string; hint: string | null }[] }).problems };
}

describe("the Muon walkthrough: a paper never leaks into a task", () => {
  let w: Walkthrough;
  beforeAll(async () => {
    w = await setUp();
  });

  it("pins the PDF's hash for an unversioned arXiv link, caches the PDF and writes no paper text", async () => {
    // no --id: the suggestion comes from the method's name, not from "LLM" in the title
    const r = await runCli(newFlags(w, { "--paper-pdf": "muon.pdf" }), { cwd: w.root, env: w.env });
    expect(r.exitCode, r.stderr).toBe(0);
    const dir = join(w.root, "tasks", "muon-newton-schulz");
    const m = await manifestOf(dir);
    expect(m.upstream).toMatchObject({ repo: "https://github.com/ourlab/muon-mini", commit: w.commit });
    expect(m.paper).toMatchObject({ url: "https://arxiv.org/abs/2502.16982", sha256: SHA, bytes: PDF.length });
    expect(m.paper.text).toBeUndefined();
    expect(r.stderr).toContain('names no version: a download takes arXiv\'s latest version and is checked against this hash; add "arxiv": "2502.16982vN"');
    // the PDF is in the paper cache under its hash, byte for byte
    expect((await readFile(join(w.env.LMR_CACHE!, "papers", `${SHA}.pdf`))).equals(PDF)).toBe(true);
    // nothing of the paper in the task folder: no paper.json, no PDF
    const files = await listTaskFiles(dir);
    expect(files.filter((f) => /paper|\.pdf$/.test(f))).toEqual([]);
    expect(files).toContain("task.json");
    // the instruction still cites the paper's pages (found in the PDF, not stored)
    expect(await readFile(join(dir, "instruction.md"), "utf8")).toMatch(/page 2, section "2 Method"/);
    // a valid task but for the draft instruction's TODO(author) markers
    const v = await validate(w, dir);
    expect(v.problems.map((p) => p.pointer)).toEqual(["/instruction"]);
  });

  it("validate rejects a planted paper.text and a planted PDF, naming the file and the fix", async () => {
    const dir = join(w.root, "tasks", "muon-newton-schulz");
    const text = await readFile(join(dir, "task.json"), "utf8");
    const m = JSON.parse(text) as TaskManifest;
    m.paper.text = "paper.json";
    await writeFile(join(dir, "task.json"), JSON.stringify(m, null, 2) + "\n");
    await writeFile(join(dir, "paper.json"), JSON.stringify({ "1": "Muon is Scalable for LLM Training" }) + "\n");
    await writeFiles(dir, { "notes/muon-v1.bin": PDF, "extras/paper.md": "## Page 1\n\ntext\n" });
    const v = await validate(w, dir);
    expect(v.exitCode).toBe(1);
    const leaks = v.problems.filter((p) => p.pointer.startsWith("/paper"));
    expect(leaks.map((p) => p.pointer)).toEqual(["/paper", "/paper", "/paper/text"]);
    const [md, pdf, declared] = leaks;
    expect(declared!.message).toContain(
      "paper.text ships 'paper.json', the paper's text, with a task whose upstream is a repository URL (https://github.com/ourlab/muon-mini)",
    );
    expect(declared!.hint).toMatch(/^delete paper\.json and remove paper\.text; pin the PDF instead/);
    // found by its content (%PDF-), whatever its name
    expect(pdf!.message).toBe("'notes/muon-v1.bin' is a PDF in the task folder: papers (and other PDFs) are never committed with a task");
    expect(pdf!.hint).toMatch(/^delete notes\/muon-v1\.bin; pin the PDF instead/);
    expect(md!.message).toContain("'extras/paper.md' looks like the paper's text");
    // the same task with the leaks removed is clean again
    await writeFile(join(dir, "task.json"), text);
    for (const f of ["paper.json", "notes/muon-v1.bin", "extras/paper.md"]) await import("node:fs/promises").then((fs) => fs.rm(join(dir, f)));
    expect((await validate(w, dir)).problems.map((p) => p.pointer)).toEqual(["/instruction"]);
  });

  it("takes --pdf-url of a PDF in the upstream at the pinned commit: hashed from the checkout, no download", async () => {
    const link = `https://github.com/ourlab/muon-mini/raw/${w.commit}/docs/muon.pdf`;
    const r = await runCli(newFlags(w, { "--pdf-url": link, "--id": "muon-from-repo" }), { cwd: w.root, env: { ...w.env, LMR_CACHE: join(w.root, "cache2") } });
    expect(r.exitCode, r.stderr).toBe(0);
    const dir = join(w.root, "tasks", "muon-from-repo");
    expect((await manifestOf(dir)).paper).toMatchObject({ pdf_url: link, sha256: SHA, bytes: PDF.length });
    expect((await stat(join(w.root, "cache2", "papers", `${SHA}.pdf`))).size).toBe(PDF.length);
    expect((await listTaskFiles(dir)).filter((f) => /paper|\.pdf$/.test(f))).toEqual([]);

    // a branch's file can change under its address; a blob page is HTML: both named, nothing written
    const branch = await runCli(newFlags(w, { "--pdf-url": "https://github.com/ourlab/muon-mini/raw/main/docs/muon.pdf", "--id": "muon-branch" }), {
      cwd: w.root,
      env: w.env,
    });
    expect(branch.exitCode).toBe(2);
    expect(branch.stderr).toContain(
      `--pdf-url: https://github.com/ourlab/muon-mini/raw/main/docs/muon.pdf names revision 'main', not the pinned commit ${w.commit}`,
    );
    expect(branch.stderr).toContain(`--pdf-url ${link}`);
    const blob = await runCli(newFlags(w, { "--pdf-url": `https://github.com/ourlab/muon-mini/blob/${w.commit}/docs/muon.pdf`, "--id": "muon-blob" }), {
      cwd: w.root,
      env: w.env,
    });
    expect(blob.exitCode).toBe(2);
    expect(blob.stderr).toContain("is the HTML page of the file, not the PDF");
    const missing = await runCli(newFlags(w, { "--pdf-url": `https://github.com/ourlab/muon-mini/raw/${w.commit}/docs/nope.pdf`, "--id": "muon-missing" }), {
      cwd: w.root,
      env: w.env,
    });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain(`docs/nope.pdf is not a file of https://github.com/ourlab/muon-mini at ${w.commit}`);
    for (const id of ["muon-branch", "muon-blob", "muon-missing"]) expect(await stat(join(w.root, "tasks", id)).catch(() => undefined)).toBeUndefined();
  });

  it("refuses paper text for a URL upstream (exit 2, nothing written)", async () => {
    await writeFile(join(w.root, "paper.json"), JSON.stringify({ "1": "Muon is Scalable for LLM Training" }) + "\n");
    const r = await runCli(newFlags(w, { "--paper-pdf": "paper.json", "--id": "muon-text" }), { cwd: w.root, env: w.env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("is paper text, not a PDF, and the upstream https://github.com/ourlab/muon-mini is a real repository");
    expect(r.stderr).toContain("give the paper's PDF instead");
    expect(await stat(join(w.root, "tasks", "muon-text")).catch(() => undefined)).toBeUndefined();
  });
});
