import { createHash } from "node:crypto";
import { cp, mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BundleManifest } from "../../src/bundle/types.js";
import type { FetchResult } from "../../src/paper/fetch.js";
import { REPO_ROOT, UPSTREAMS, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData, jsonEnvelope } from "../helpers/run-cli.js";
import { buildPdf } from "./pdf-writer.js";
import { PdfServer } from "./pdf-server.js";

const FIXTURES = join(REPO_ROOT, "test", "fixtures", "papers", "tasks");
const ALPHA_PATH = "/pdf/2401.00001v2";
const BETA_PATH = "/papers/beta.pdf";

/** Two papers we write ourselves: headings, an equation label, two and one pages. */
const ALPHA = buildPdf([
  [
    "Pairwise Objectives for Small Models",
    "Abstract",
    "We revisit preference learning with a logistic objective.",
    "1 Introduction",
    "Preference data pairs a chosen and a rejected answer.",
  ],
  [
    "2 Method",
    "The objective compares the margins of two models.",
    "L = -log sigmoid(beta h)      (3)",
    "where h is the margin of the chosen answer.",
    "3 Experiments",
    "We train for three epochs.",
  ],
]);
const BETA = buildPdf([
  ["A Second Generated Paper", "1 Introduction", "This paper exists only for the tests of lmr paper fetch.", "2 Results", "Nothing else happens here."],
]);

function sha(b: Buffer): string {
  return createHash("sha256").update(b).digest("hex");
}

afterAll(removeTempDirs);

describe("lmr paper fetch and lmr build with papers from a local HTTP server", () => {
  const server = new PdfServer().serve(ALPHA_PATH, ALPHA).serve(BETA_PATH, BETA);
  let root: string;
  let tasks: string;
  let cache: string;
  let env: Record<string, string>;

  /** The fixture tasks in ROOT/tasks, their upstream in ROOT/upstreams, beta's pdf_url on our server. */
  async function copyFixtures(into: string): Promise<string> {
    await mkdir(into, { recursive: true });
    await writeFile(join(into, "package.json"), "{}\n");
    await cp(join(UPSTREAMS, "pref-trainer"), join(into, "upstreams", "pref-trainer"), { recursive: true });
    const dir = join(into, "tasks");
    await cp(FIXTURES, dir, { recursive: true });
    for (const id of ["paper-alpha", "paper-beta"]) {
      const file = join(dir, id, "task.json");
      const text = (await readFile(file, "utf8")).replace("../../../upstreams/", "../../upstreams/").replace("http://127.0.0.1:9", server.base);
      await writeFile(file, text);
    }
    return dir;
  }

  const fetchArgs = (...more: string[]): string[] => ["paper", "fetch", "--tasks-dir", tasks, "--arxiv-base", `${server.base}/pdf/`, ...more];

  beforeAll(async () => {
    await server.start();
    root = await makeTempDir("paper-fetch");
    tasks = await copyFixtures(root);
    cache = join(root, "cache");
    env = { LMR_CACHE: cache };
  });
  afterAll(() => server.stop());

  it("downloads both PDFs into the cache and pins sha256/bytes in task.json as a text edit", async () => {
    const before = await readFile(join(tasks, "paper-alpha", "task.json"), "utf8");
    const r = await runCli(fetchArgs("--update-manifest", "--json"), { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(jsonEnvelope(r.stdout).ok).toBe(true);
    const out = jsonData(r.stdout) as { papers: FetchResult[] };
    expect(out.papers.map((p) => [p.task, p.status, p.sha256, p.bytes, p.manifest_updated])).toEqual([
      ["paper-alpha", "downloaded", sha(ALPHA), ALPHA.length, true],
      ["paper-beta", "downloaded", sha(BETA), BETA.length, true],
    ]);
    expect((await readFile(join(cache, "papers", `${sha(ALPHA)}.pdf`))).equals(ALPHA)).toBe(true);
    expect((await readFile(join(cache, "papers", `${sha(BETA)}.pdf`))).equals(BETA)).toBe(true);
    expect((await readdir(join(cache, "papers"))).filter((f) => f.endsWith(".part"))).toEqual([]);
    expect(server.seen.map((s) => s.path)).toEqual([ALPHA_PATH, BETA_PATH]);

    // only the two new members appear, after "arxiv", in the object's one-member-per-line style
    const after = await readFile(join(tasks, "paper-alpha", "task.json"), "utf8");
    expect(after).toBe(before.replace('"arxiv": "2401.00001v2"\n', `"arxiv": "2401.00001v2",\n    "sha256": "${sha(ALPHA)}",\n    "bytes": ${ALPHA.length}\n`));
    // beta's paper object is inline: the pin goes inline too
    expect(await readFile(join(tasks, "paper-beta", "task.json"), "utf8")).toContain(
      `"pdf_url": "${server.base}/papers/beta.pdf", "sha256": "${sha(BETA)}", "bytes": ${BETA.length} }`,
    );
    expect((await runCli(["validate", "--tasks-dir", tasks])).exitCode).toBe(0);
  });

  it("downloads nothing on a rerun with everything cached", async () => {
    const seen = server.seen.length;
    const r = await runCli(fetchArgs(), { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(server.seen.length).toBe(seen);
    expect(r.stdout).toMatch(/paper-alpha: cached → .*\.pdf \(\d+ kB, sha256 [0-9a-f]{12}…\)\n.*paper-beta: cached/);
  });

  it("rejects a PDF that does not match the pinned hash, naming the task, the field and the URL", async () => {
    const wrong = join(root, "wrong");
    const dir = await copyFixtures(wrong);
    const file = join(dir, "paper-alpha", "task.json");
    const m = JSON.parse(await readFile(file, "utf8"));
    m.paper.sha256 = "0".repeat(64);
    m.paper.bytes = ALPHA.length;
    await writeFile(file, JSON.stringify(m, null, 2) + "\n");
    const r = await runCli(["paper", "fetch", join(dir, "paper-alpha"), "--arxiv-base", `${server.base}/pdf/`], { env: { LMR_CACHE: join(wrong, "cache") } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`${file}: /paper/sha256: task paper-alpha: ${server.base}${ALPHA_PATH} (as downloaded) has sha256 ${sha(ALPHA)}`);
    expect(r.stderr).toContain(`the manifest pins sha256 ${"0".repeat(64)}`);
    expect(await readdir(join(wrong, "cache", "papers"))).toEqual([]);
  });

  it("resumes an interrupted download with a Range request, within a run and across runs", async () => {
    const fresh = join(root, "resume-cache");
    const part = join(fresh, "papers", `${sha(ALPHA)}.pdf.part`);
    server.cutNext(ALPHA_PATH, 700, async () => (await stat(part).catch(() => undefined))?.size === 700);
    let seen = server.seen.length;
    const r = await runCli(fetchArgs("--json", join(tasks, "paper-alpha")), { env: { LMR_CACHE: fresh } });
    expect(r.exitCode, r.stderr).toBe(0);
    const [alpha] = (jsonData(r.stdout) as { papers: FetchResult[] }).papers;
    expect(alpha).toMatchObject({ status: "downloaded", sha256: sha(ALPHA), requests: 2, resumed_from: 700 });
    expect(server.seen.slice(seen)).toEqual([{ path: ALPHA_PATH }, { path: ALPHA_PATH, range: "bytes=700-" }]);
    expect((await readFile(join(fresh, "papers", `${sha(ALPHA)}.pdf`))).equals(ALPHA)).toBe(true);

    // a part file left by a killed run is continued, not restarted
    const later = join(root, "resume-cache-2");
    await mkdir(join(later, "papers"), { recursive: true });
    await writeFile(join(later, "papers", `${sha(ALPHA)}.pdf.part`), ALPHA.subarray(0, 1000));
    seen = server.seen.length;
    const again = await runCli(fetchArgs(join(tasks, "paper-alpha")), { env: { LMR_CACHE: later } });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain("(resumed at byte 1000)");
    expect(server.seen.slice(seen)).toEqual([{ path: ALPHA_PATH, range: "bytes=1000-" }]);
    expect((await readFile(join(later, "papers", `${sha(ALPHA)}.pdf`))).equals(ALPHA)).toBe(true);
  });

  it("lmr build puts paper.pdf and paper.md in each workspace, outside the workspace hash", async () => {
    const out = join(root, "bundles");
    const r = await runCli(["build", "--tasks-dir", tasks, "--out", out, "--json"], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    for (const [id, pdf, pages] of [
      ["paper-alpha", ALPHA, 2],
      ["paper-beta", BETA, 1],
    ] as const) {
      const ws = join(out, id, "workspace");
      expect((await readFile(join(ws, "paper.pdf"))).equals(pdf), id).toBe(true);
      const bundle = JSON.parse(await readFile(join(out, id, "bundle.json"), "utf8")) as BundleManifest;
      expect(bundle.paper).toMatchObject({ source: "cache", files: ["paper.pdf", "paper.md"], sha256: sha(pdf), bytes: pdf.length, pages, pinned: true });
      expect(bundle.warnings).toBeUndefined();
    }
    const md = await readFile(join(out, "paper-alpha", "workspace", "paper.md"), "utf8");
    expect(md).toMatch(/^# Pairwise Objectives for Small Models\n\n## Page 1\n\nPairwise Objectives for Small Models\nAbstract\n/);
    expect(md).toContain("## Page 2\n\n2 Method\n");
    expect(md).toMatch(/^L = -log sigmoid\(beta h\)\s+\(3\)$/m);

    // the same tasks built where no paper is available: same workspace hash, a warning per task
    const bare = join(root, "bundles-bare");
    const b = await runCli(["build", "--tasks-dir", tasks, "--out", bare], { env: { LMR_CACHE: join(root, "empty-cache") } });
    expect(b.exitCode, b.stderr).toBe(0);
    for (const id of ["paper-alpha", "paper-beta"]) {
      const withPaper = JSON.parse(await readFile(join(out, id, "bundle.json"), "utf8")) as BundleManifest;
      const without = JSON.parse(await readFile(join(bare, id, "bundle.json"), "utf8")) as BundleManifest;
      expect(without.hashes.workspace).toBe(withPaper.hashes.workspace);
      expect(without.paper).toBeUndefined();
      expect(await readdir(join(bare, id, "workspace"))).not.toContain("paper.pdf");
    }
  });

  it("lmr scaffold instruction cites the pinned PDF that the build puts in the workspace", async () => {
    const file = join(tasks, "paper-alpha", "instruction.md");
    const kept = await readFile(file, "utf8");
    const r = await runCli(["scaffold", "instruction", join(tasks, "paper-alpha"), "--force", "--keywords", "margins"], { env });
    // the draft has TODO(author) markers, which a build refuses: the later tests get the instruction back
    const text = await readFile(file, "utf8");
    await writeFile(file, kept);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(text).toContain("`paper.md` holds its text, page by page,\nand `paper.pdf` is the PDF.");
    expect(text).toContain('- page 2, section "2 Method", near equation (3): "The objective compares the margins of two models."');
  });

  it("works offline from --papers DIR with the server stopped", async () => {
    const papers = join(root, "papers");
    await mkdir(papers);
    await writeFile(join(papers, `${sha(ALPHA)}.pdf`), ALPHA);
    await writeFile(join(papers, "paper-beta.pdf"), BETA);
    await server.stop();

    const offline = { LMR_CACHE: join(root, "offline-cache") };
    const unreachable = await runCli(fetchArgs(join(tasks, "paper-alpha")), { env: offline });
    expect(unreachable.exitCode).toBe(3);
    expect(unreachable.stderr).toMatch(new RegExp(`task\\.json: /paper/arxiv: task paper-alpha: cannot download ${server.base}${ALPHA_PATH}: `));

    const f = await runCli(fetchArgs("--papers", papers, "--json"), { env: offline });
    expect(f.exitCode, f.stderr).toBe(0);
    expect((jsonData(f.stdout) as { papers: FetchResult[] }).papers.map((p) => p.status)).toEqual(["papers-dir", "papers-dir"]);

    const out = join(root, "bundles-offline");
    const b = await runCli(["build", "--tasks-dir", tasks, "--out", out, "--papers", papers], { env: { LMR_CACHE: join(root, "another-empty-cache") } });
    expect(b.exitCode, b.stderr).toBe(0);
    expect(b.stderr).toBe("");
    for (const [id, pdf] of [
      ["paper-alpha", ALPHA],
      ["paper-beta", BETA],
    ] as const) {
      expect((await readFile(join(out, id, "workspace", "paper.pdf"))).equals(pdf)).toBe(true);
      expect(await readFile(join(out, id, "workspace", "paper.md"), "utf8")).toContain("## Page 1");
      expect((JSON.parse(await readFile(join(out, id, "bundle.json"), "utf8")) as BundleManifest).paper?.source).toBe("papers-dir");
    }
  });

  it("--require-paper fails on a missing paper naming the task; without it the build says so once", async () => {
    const noPaper = { LMR_CACHE: join(root, "no-papers-cache") };
    const strict = await runCli(["build", join(tasks, "paper-alpha"), "--out", join(root, "strict"), "--require-paper"], { env: noPaper });
    expect(strict.exitCode, strict.stderr).toBe(2);
    expect(strict.stderr).toContain("/paper: task paper-alpha: paper required (--require-paper), but the pinned PDF is not in the paper cache");

    const lenient = await runCli(["build", join(tasks, "paper-alpha"), "--out", join(root, "lenient")], { env: noPaper });
    expect(lenient.exitCode, lenient.stderr).toBe(0);
    const lines = lenient.stderr.trim().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(/^warning: paper-alpha: paper not in the workspace: the pinned PDF is not in the paper cache \(run `lmr paper fetch`\)$/),
    ]);
    const bundle = JSON.parse(await readFile(join(root, "lenient", "paper-alpha", "bundle.json"), "utf8")) as BundleManifest;
    expect(bundle.warnings).toEqual([lines[0]!.replace(/^warning: /, "")]);
  });
});
