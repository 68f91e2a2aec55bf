// @inquirer/testing must be imported before the code that loads the prompts: it replaces them
import { screen } from "@inquirer/testing/vitest";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { TaskManifest } from "../../src/manifest/types.js";
import { createTask } from "../../src/new/create-task.js";
import { walkNextSteps } from "../../src/new/next.js";
import { makeTerminalAsker } from "../../src/new/wizard.js";
import { removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";
import { buildPdf } from "../paper/pdf-writer.js";
import { DPO_TITLE, makeProject } from "./project.js";

afterAll(removeTempDirs);
// a test that sets LMR_CACHE (createTask runs in this process) gets it back afterwards
const cacheBefore = process.env.LMR_CACHE;
afterAll(() => {
  if (cacheBefore === undefined) delete process.env.LMR_CACHE;
  else process.env.LMR_CACHE = cacheBefore;
});

/**
 * Waits until the prompt on screen shows `text`. Polling the screen (rather
 * than screen.next()) works whether or not the prompt has rendered yet: the
 * wizard does git and file work between questions.
 */
async function waitFor(text: string | RegExp, timeoutMs = 15_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const shown = screen.getScreen();
    if (typeof text === "string" ? shown.includes(text) : text.test(shown)) return shown;
    if (Date.now() > end) throw new Error(`timed out waiting for ${String(text)}; the screen shows:\n${shown}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function answerText(prompt: string, value: string): Promise<void> {
  await waitFor(prompt);
  if (value !== "") screen.type(value);
  screen.keypress("enter");
}

/** Types a filter into a search prompt and picks the first match once `shown` is the only line of that kind. */
async function pickFromSearch(prompt: string, filter: string, shown: RegExp): Promise<void> {
  await waitFor(prompt);
  screen.type(filter);
  await waitFor(shown);
  screen.keypress("enter");
}

async function readManifest(dir: string): Promise<TaskManifest> {
  return JSON.parse(await readFile(join(dir, "task.json"), "utf8")) as TaskManifest;
}

describe("lmr new at a terminal (the wizard)", () => {
  it("asks every question, lists files and symbols to filter, re-asks a wrong region, and writes the task", async () => {
    const p = await makeProject("wizard");
    const notes: string[] = [];
    const done = createTask({}, { cwd: p.root, ask: await makeTerminalAsker(), note: (l) => notes.push(l), today: "2026-01-02" });

    await answerText("Paper title", DPO_TITLE);
    await answerText("Paper URL (or the path of its PDF)", "https://arxiv.org/abs/2305.18290");
    await answerText("Year of publication", "2023");
    await answerText("Venue", "NeurIPS 2023");
    await answerText("Upstream repository", "upstreams/pref-trainer");
    // the head commit of the local repository is offered as the default
    expect(await waitFor("Commit to pin")).toContain(p.commit);
    screen.keypress("enter");

    const files = await waitFor(/Target file[\s\S]*trainers\.py/);
    for (const f of ["models.py", "train.py", "utils.py"]) expect(files).toContain(f);
    await pickFromSearch("Target file", "trainers", /trainers\.py(?![\s\S]*models\.py)/);
    await pickFromSearch("Target symbol", "train_step", /Trainer\.train_step {2}\(method, line \d+\)(?![\s\S]*preference_loss)/);

    const modes = await waitFor("Mask mode");
    expect(modes).toContain("body");
    expect(modes).not.toContain("class:");
    screen.keypress("down");
    screen.keypress("enter");
    await answerText("First line to mask", "if cfg.ipo:");
    await answerText("Last line to mask", "no such line");
    expect(await waitFor("cannot be masked in mode region")).toContain("no such line");
    for (let i = 0; i < "no such line".length; i++) screen.keypress("backspace");
    screen.type("dloss_dlogits = cfg.beta * (pull - push)");
    screen.keypress("enter");

    expect(await waitFor("Category")).toContain("Training Objectives & Optimization Techniques");
    screen.keypress("down");
    screen.keypress("enter");
    expect(await waitFor("Task id")).toContain("dpo-trainer-train-step");
    screen.keypress("enter");
    expect(await waitFor("Upstream licence")).toContain("detected MIT in LICENSE");
    screen.keypress("enter");
    await answerText("Author", "Wizard Author");

    const result = await done;
    const taskDir = join(p.root, "tasks", "dpo-trainer-train-step");
    expect(result.taskDir).toBe(taskDir);
    expect(result.problems).toEqual([]);
    const m = await readManifest(taskDir);
    expect(m).toMatchObject({
      id: "dpo-trainer-train-step",
      paper: { title: DPO_TITLE, url: "https://arxiv.org/abs/2305.18290", year: 2023, venue: "NeurIPS 2023" },
      category: "Decoding & Search Strategies",
      upstream: { path: "../../upstreams/pref-trainer", commit: p.commit, license: "MIT" },
      targets: [
        {
          file: "trainers.py",
          symbol: "Trainer.train_step",
          mode: "region",
          region: { start: { anchor: "if cfg.ipo:" }, end: { anchor: "dloss_dlogits = cfg.beta * (pull - push)" } },
        },
      ],
      provenance: { author: "Wizard Author", created: "2026-01-02" },
    });
    expect(notes.some((n) => n.startsWith("wrote tasks/dpo-trainer-train-step/"))).toBe(true);
    const instruction = await readFile(join(taskDir, "instruction.md"), "utf8");
    expect(instruction).toContain("Some lines inside this method have been removed");
  });

  it("takes a PDF for the paper, re-asks a commit that does not exist, and takes flags as answers", async () => {
    const p = await makeProject("wizard-pdf");
    await writeFile(join(p.root, "paper.pdf"), buildPdf([["2 Method", "A preference loss on margins."]]));
    const notes: string[] = [];
    const flags = { category: "evaluation", author: "Flag Author", id: "from-flags" };
    // the PDF goes into the paper cache: this test's own, not the user's
    process.env.LMR_CACHE = join(p.root, "cache");
    const done = createTask(flags, { cwd: p.root, ask: await makeTerminalAsker(), note: (l) => notes.push(l) });

    await answerText("Paper title", "ROUGE: A Package for Automatic Evaluation of Summaries");
    await answerText("Paper URL (or the path of its PDF)", "paper.pdf");
    await answerText("Paper URL (a stable link", "https://aclanthology.org/W04-1013");
    await answerText("Year of publication", "2004");
    await answerText("Venue", "");
    await answerText("Upstream repository", "upstreams/pref-trainer");
    await waitFor("Commit to pin");
    screen.type("0000000");
    screen.keypress("enter");
    // a commit that is not there is reported and asked again, with the head as default
    expect(await waitFor(new RegExp(`Commit to pin.*\\(${p.commit}\\)$`))).not.toContain("0000000");
    expect(notes.join("\n")).toContain("--commit: '0000000' is not a commit");
    screen.keypress("enter");
    await pickFromSearch("Target file", "trainers", /trainers\.py(?![\s\S]*models\.py)/);
    // TrainerConfig (a dataclass without methods) cannot be masked: the wizard says so and asks again
    await pickFromSearch("Target symbol", "(class", /TrainerConfig {2}\(class[\s\S]*Trainer {2}\(class/);
    expect(await waitFor("Mask mode")).toContain("class: every method body");
    screen.keypress("enter");
    await waitFor(/Target symbol(?![\s\S]*✔)/);
    expect(notes.join("\n")).toContain("TrainerConfig cannot be masked in mode class");
    screen.type("(class");
    await waitFor(/TrainerConfig {2}\(class[\s\S]*Trainer {2}\(class/);
    screen.keypress("down");
    await waitFor(/❯ Trainer {2}\(class/);
    screen.keypress("enter");
    expect(await waitFor("Mask mode")).toContain("class: every method body");
    screen.keypress("enter");
    await answerText("Upstream licence", "");

    const result = await done;
    expect(result.manifest).toMatchObject({
      id: "from-flags",
      paper: {
        title: "ROUGE: A Package for Automatic Evaluation of Summaries",
        url: "https://aclanthology.org/W04-1013",
        year: 2004,
        bytes: expect.any(Number) as number,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as string,
      },
      category: "Evaluation Metrics & Benchmarking",
      targets: [{ file: "trainers.py", symbol: "Trainer", mode: "class" }],
      provenance: { author: "Flag Author" },
    });
    expect(result.manifest.paper.venue).toBeUndefined();
    // the PDF's hash is pinned (whatever the URL); its text never goes into the task
    expect(result.manifest.paper.text).toBeUndefined();
    expect(result.files).not.toContain("paper.json");
    expect(await readManifest(result.taskDir)).toEqual(result.manifest);
  });

  it("after writing, offers the next lmr steps one by one and stops at a no or a failure", async () => {
    const p = await makeProject("wizard-next");
    const flags = {
      paperTitle: DPO_TITLE,
      paperUrl: "https://arxiv.org/abs/2305.18290",
      year: "2023",
      repo: "upstreams/pref-trainer",
      file: "trainers.py",
      symbol: "preference_loss",
      category: "training",
      author: "A",
    };
    const result = await createTask(flags, { cwd: p.root });
    const runs: string[][] = [];
    const stderr: string[] = [];
    const run = async (args: string[]): Promise<number> => {
      runs.push(args);
      const r = await runCli(args, { cwd: p.root });
      stderr.push(r.stderr);
      return r.exitCode;
    };

    // the driver is still the skeleton: recording fails, and the steps left are printed
    let printed = "";
    const failing = walkNextSteps(await makeTerminalAsker(), result.next, run, (t) => (printed += t));
    await waitFor("Run `lmr record tasks/dpo-preference-loss` now?");
    screen.keypress("enter");
    expect(await failing).toBe(1);
    expect(printed).toContain("Now edit tasks/dpo-preference-loss/driver.py");
    expect(printed, stderr.join("\n")).toContain("`lmr record tasks/dpo-preference-loss` exited with 2.");
    expect(stderr[0]).toContain("driver.py is the skeleton written by `lmr new`");
    expect(printed).toMatch(/Next steps:\n {2}1\. lmr record tasks\/dpo-preference-loss\n/);

    await writeFile(
      join(result.taskDir, "driver.py"),
      "from trainers import preference_loss\nfor b in (0.1, 1.0):\n    preference_loss([-1.0, -3.0], [-2.0, -1.0], [-1.5, -2.0], [-1.5, -2.5], b, ipo=b > 0.5)\n",
    );
    printed = "";
    const walking = walkNextSteps(await makeTerminalAsker(), result.next, run, (t) => (printed += t));
    await waitFor("Run `lmr record tasks/dpo-preference-loss` now?");
    screen.keypress("enter");
    await waitFor("Run `lmr scaffold tests tasks/dpo-preference-loss` now?");
    screen.keypress("enter");
    await waitFor("Run `lmr verify tasks/dpo-preference-loss` now?");
    screen.type("n");
    screen.keypress("enter");
    expect(await walking, stderr.join("\n")).toBe(4);
    expect(runs.slice(1)).toEqual([
      ["record", "tasks/dpo-preference-loss"],
      ["scaffold", "tests", "tasks/dpo-preference-loss"],
    ]);
    expect(printed).toMatch(/Next steps:\n {2}1\. lmr verify tasks\/dpo-preference-loss\n/);
    const test = await readFile(join(result.taskDir, "tests", "test_preference_loss.py"), "utf8");
    expect(test).not.toContain("placeholder written by `lmr new`");
    expect(test).toContain("call-001");
  });
});
