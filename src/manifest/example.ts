import type { TaskManifest } from "./types.js";

/**
 * A manifest that uses every field of the format, typed against the TS contract.
 * The build type-checks it and a test validates it against the JSON schema, so
 * the two cannot drift apart unnoticed; it also serves as a reference for authors.
 */
export const EXAMPLE_MANIFEST: TaskManifest = {
  $schema: "../../schema/task.schema.json",
  schema_version: 1,
  id: "toy-preference-loss",
  paper: {
    title: "A Toy Paper on Preference Losses",
    url: "https://arxiv.org/abs/0000.00000",
    year: 2024,
    venue: "Fixture Workshop 2024",
    arxiv: "0000.00000v1",
    pdf_url: "https://example.org/toy-paper.pdf",
    sha256: "0000000000000000000000000000000000000000000000000000000000000000",
    bytes: 1234,
    text: "paper.json",
  },
  category: "Training Objectives & Optimization Techniques",
  set: "core",
  upstream: { repo: "https://github.com/example/toy-preference", commit: "0123456789abcdef0123456789abcdef01234567", license: "MIT", subdir: "src" },
  prepare: [
    {
      kind: "notebook-to-module",
      notebook: "notebooks/demo.ipynb",
      cells: [0, 2, { cell: 3, start: { line: 2 }, end: { anchor: "plot(" }, main: true }],
      out: "toy/demo.py",
    },
    {
      kind: "extract-function",
      file: "toy/train.py",
      within: "Trainer.step",
      start: { anchor: "logits = ", occurrence: 1 },
      end: { line: 42 },
      name: "compute_loss",
      params: ["logits", "labels"],
      returns: ["loss"],
      as_method: true,
      main_guard: true,
    },
  ],
  workspace: {
    remove: [{ path: "toy/losses_jax.py", reason: "the same loss in JAX" }],
    mask: [{ file: "toy/losses.py", symbol: "margin", mode: "body", reason: "target of another task" }],
    strip: [{ file: "toy/train.py", symbol: "Trainer", reason: "its docstring states the loss" }],
  },
  targets: [
    { file: "toy/losses.py", symbol: "preference_loss", mode: "body" },
    { file: "toy/train.py", symbol: "Trainer.compute_loss", mode: "region", line: 30, region: { start: { line: 31 }, end: { anchor: "return loss" } } },
    {
      file: "toy/model.py",
      symbol: "Scorer",
      mode: "class",
      record: { self_attrs: ["weights"], max_calls: 10, skip_args: ["logger"], check_mutations: false },
    },
  ],
  instruction: "instruction.md",
  hints: "hints.md",
  kind: "method",
  kind_reason: "the loss is the paper's contribution, not glue around it",
  giveaway: { allow: "the revealed call is the visible helper the loss must use (the contract), not a step of the method" },
  tests: {
    files: ["tests/test_preference_loss.py", "tests/candidate_setup.py", "tests/tiny_model.py"],
    fixtures: ["fixtures/cases.json"],
    mount: "lmr_tests",
    timeout_per_test_s: 30,
    timeout_total_s: 300,
    runner: "pytest",
    pytest_args: ["-q"],
    candidate: { setup: "tests/candidate_setup.py", files: ["tests/tiny_model.py"] },
  },
  environment: {
    python: "3.11",
    base: "debian:bookworm",
    system_packages: ["python3-numpy"],
    requirements: ["rapidfuzz==3.6.1"],
    stand_ins: [{ module: "wandb", reason: "imported at top level for logging only" }],
    patches: [{ attribute: "torch.compile", reason: "the base's torch has no compile; the upstream decorates its step with it" }],
    gpu: false,
    network: false,
  },
  context_files: ["README.md"],
  record: { driver: "driver.py", max_calls: 20, generators: [{ script: "generators/cases.py", outputs: ["fixtures/cases.json"] }] },
  verification: {
    runs: 3,
    mutants: 20,
    min_kill_ratio: 0.8,
    equivalent_mutants: [{ id: "m3-swap-args-L21", reason: "the helper is symmetric in its arguments" }],
    min_alternatives: 2,
    allowed_leaks: [
      { file: "docs/loss.md", reason: "the README quotes the loss" },
      { file: "toy/train.py", reason: "calls the loss of toy-margin", task: "toy-margin" },
    ],
  },
  provenance: { author: "lmr", created: "2025-01-15", notes: "Covers every field of the manifest format." },
};
