import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskManifest } from "../../src/manifest/types.js";
import { removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";
import { completeFlags, makeProject, type Project } from "../new/project.js";
import { buildPdf } from "./pdf-writer.js";
import { PdfServer } from "./pdf-server.js";

const PDF = buildPdf([
  ["A Paper About Pairs", "1 Introduction", "We study the logistic preference loss."],
  ["2 Method", "The loss compares two margins.      (1)"],
]);
const SHA = createHash("sha256").update(PDF).digest("hex");

afterAll(removeTempDirs);

/** `lmr new` wrote the task: 0, or 1 when it does not validate yet (the draft instruction's TODO(author) markers). */
function expectWritten(r: { exitCode: number; stderr: string }): void {
  expect([0, 1], r.stderr).toContain(r.exitCode);
  expect(r.stderr).toMatch(/lmr: wrote tasks\//);
}

async function manifestOf(p: Project, id: string): Promise<TaskManifest> {
  return JSON.parse(await readFile(join(p.root, "tasks", id, "task.json"), "utf8")) as TaskManifest;
}

describe("lmr new pins the paper", () => {
  const server = new PdfServer().serve("/pdf/2305.18290v3", PDF);
  let p: Project;
  let env: Record<string, string>;

  beforeAll(async () => {
    await server.start();
    p = await makeProject("paper-new");
    env = { LMR_CACHE: join(p.root, "cache"), LMR_ARXIV_BASE: `${server.base}/pdf/` };
  });
  afterAll(() => server.stop());

  it("takes the arXiv id and version from --paper-url and the hash from the downloaded PDF", async () => {
    const r = await runCli(completeFlags(p, { "--paper-url": "https://arxiv.org/abs/2305.18290v3", "--id": "pinned" }), { cwd: p.root, env });
    expectWritten(r);
    expect((await manifestOf(p, "pinned")).paper).toMatchObject({
      url: "https://arxiv.org/abs/2305.18290v3",
      arxiv: "2305.18290v3",
      sha256: SHA,
      bytes: PDF.length,
    });
    expect(server.seen).toEqual([{ path: "/pdf/2305.18290v3" }]);
    // the draft instruction points at the paper; a finished one (no TODO left) lets the task build
    const instruction = join(p.root, "tasks", "pinned", "instruction.md");
    expect(await readFile(instruction, "utf8")).toContain("`paper.md` holds its text, page by page,\nand `paper.pdf` is the PDF.");
    await writeFile(instruction, "# Implement `preference_loss`\n\nThe paper is in `paper.md` and `paper.pdf` at the workspace root.\n");
    // the build finds the PDF that lmr new cached
    const out = join(p.root, "out");
    const b = await runCli(["build", join(p.root, "tasks", "pinned"), "--out", out, "--require-paper"], { cwd: p.root, env });
    expect(b.exitCode, b.stderr).toBe(0);
    expect((await readFile(join(out, "pinned", "workspace", "paper.pdf"))).equals(PDF)).toBe(true);
    expect(await readFile(join(out, "pinned", "workspace", "paper.md"), "utf8")).toContain("## Page 2\n\n2 Method");
  });

  it("hashes --paper-pdf instead of downloading, and says when the URL names no version", async () => {
    await writeFile(join(p.root, "paper.pdf"), PDF);
    const seen = server.seen.length;
    const local = await runCli(completeFlags(p, { "--paper-url": "https://arxiv.org/pdf/2305.18290v3", "--paper-pdf": "paper.pdf", "--id": "from-file" }), {
      cwd: p.root,
      env,
    });
    expectWritten(local);
    const m0 = await manifestOf(p, "from-file");
    expect(m0.paper).toMatchObject({ arxiv: "2305.18290v3", sha256: SHA, bytes: PDF.length });
    // the pinned PDF is cached for the build; its text is not stored in the task, but the instruction cites it
    expect(m0.paper.text).toBeUndefined();
    expect(await readFile(join(p.root, "tasks", "from-file", "instruction.md"), "utf8")).toMatch(/- page 2, section "2 Method"/);
    expect(server.seen.length).toBe(seen);

    const bare = await runCli(completeFlags(p, { "--id": "unversioned" }), { cwd: p.root, env });
    expectWritten(bare);
    expect(bare.stderr).toContain('https://arxiv.org/abs/2305.18290 names no version, so paper.arxiv is not set; add it ("arxiv": "2305.18290vN")');
    const m = await manifestOf(p, "unversioned");
    expect(m.paper.arxiv).toBeUndefined();
    expect(m.paper.sha256).toBeUndefined();
  });

  it("writes the pin without a hash when the PDF cannot be downloaded", async () => {
    const r = await runCli(completeFlags(p, { "--paper-url": "https://arxiv.org/abs/2401.99999v1", "--id": "offline" }), { cwd: p.root, env });
    expectWritten(r);
    expect(r.stderr).toContain(`paper: task offline: cannot download ${server.base}/pdf/2401.99999v1: HTTP 404 Not Found; sha256/bytes not pinned`);
    const m = await manifestOf(p, "offline");
    expect(m.paper).toMatchObject({ arxiv: "2401.99999v1" });
    expect(m.paper.sha256).toBeUndefined();
  });
});
