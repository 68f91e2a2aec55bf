import { execa } from "execa";
import { existsSync } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HfRow } from "../../src/interop/export/hf.js";
import { findSecrets, taskSecrets, type Secret } from "../helpers/export-secrets.js";
import { EXAMPLE_TASKS, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { HARNESS_PYTHON } from "../helpers/harness-python.js";
import { runCli } from "../helpers/run-cli.js";

afterAll(removeTempDirs);

/** Reads the exported folder the way a user does, offline: load_dataset on the folder, the card's YAML. */
const CHECK = String.raw`
import json, sys, yaml
from datasets import load_dataset
from huggingface_hub import DatasetCard
out = sys.argv[1]
ds = load_dataset(out, split="test")
card = DatasetCard.load(out + "/README.md")
text = open(out + "/README.md", encoding="utf-8").read()
header = yaml.safe_load(text.split("---\n")[1])
print(json.dumps({
  "rows": ds.num_rows,
  "columns": sorted(ds.column_names),
  "ids": list(ds["id"]),
  "targets0": ds[0]["targets"],
  "env0": ds[0]["environment"],
  "card": card.data.to_dict(),
  "header": header,
}))
`;

describe.skipIf(!existsSync(HARNESS_PYTHON))("lmr export --format hf", () => {
  let root: string;
  let out: string;
  let rows: HfRow[];

  beforeAll(async () => {
    root = await makeTempDir("export-hf");
    out = join(root, "hf");
    const r = await runCli(["export", "--format", "hf", "--out", out, "--tasks-dir", EXAMPLE_TASKS, "--json"], { env: { LMR_CACHE: join(root, "cache") } });
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    rows = (await readFile(join(out, "data", "test.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as HfRow);
  }, 60_000);

  it("writes one row per task with both instruction levels and the verification summary", async () => {
    const ids = (await readdir(EXAMPLE_TASKS)).sort();
    expect(rows.map((r) => r.id)).toEqual(ids);
    const pref = rows.find((r) => r.id === "pref-loss")!;
    expect(pref.instruction_paper).toBe(await readFile(join(EXAMPLE_TASKS, "pref-loss", "instruction.md"), "utf8"));
    expect(pref.instruction_hinted).toBe(await readFile(join(EXAMPLE_TASKS, "pref-loss", "hints.md"), "utf8"));
    expect(pref.verification).toMatchObject({ ok: true, current: true });
    expect(pref.tests.count).toBeGreaterThan(0);
    // a local upstream's path is not shipped
    expect(pref.upstream).toEqual({ repo: null, commit: null, license: "MIT", redistributable: true });
    // every row has every key, so the JSON loader infers one schema
    for (const r of rows) expect(Object.keys(r).sort()).toEqual(Object.keys(pref).sort());
  });

  it("is read by datasets.load_dataset offline, and the card's YAML is what the Hub reads", async () => {
    const r = await execa(HARNESS_PYTHON, ["-c", CHECK, out], {
      env: { HF_DATASETS_OFFLINE: "1", HF_HUB_OFFLINE: "1", HF_HOME: join(root, "hf-home") },
      reject: false,
    });
    expect(r.stderr.split("\n").filter((l) => /Traceback|Error/.test(l))).toEqual([]);
    expect(r.exitCode).toBe(0);
    const got = JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, any>;
    expect(got.rows).toBe(rows.length);
    expect(got.ids).toEqual(rows.map((x) => x.id));
    expect(got.columns).toEqual(Object.keys(rows[0]!).sort());
    expect(got.targets0).toEqual(rows[0]!.targets);
    expect(got.card).toMatchObject({
      license: "other",
      license_name: "per-task-upstream",
      configs: [{ config_name: "default", data_files: [{ split: "test", path: "data/test.jsonl" }] }],
    });
    expect(got.header.size_categories).toEqual(["n<1K"]);
  }, 120_000);

  it("holds no hidden test, fixture, reference body or paper text", async () => {
    const bundles = join(root, "bundles");
    const b = await runCli(["build", "--tasks-dir", EXAMPLE_TASKS, "--out", bundles], { env: { LMR_CACHE: join(root, "cache") } });
    expect(b.exitCode).toBe(0);
    const secrets: Secret[] = [];
    for (const r of rows) secrets.push(...(await taskSecrets(join(EXAMPLE_TASKS, r.id), join(bundles, r.id))));
    // the check is not empty: every task contributes grader, reference and (examples) paper lines
    for (const what of ["grader file", "reference body", "paper text"]) expect(secrets.some((s) => s.what.startsWith(what))).toBe(true);
    expect(await findSecrets(out, secrets)).toEqual([]);
    // and it would see one: a bundle's own grader folder is full of them
    expect((await findSecrets(join(bundles, "pref-loss", "grader"), secrets)).length).toBeGreaterThan(0);
  }, 60_000);
});
