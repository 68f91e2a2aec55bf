import { describe, expect, it } from "vitest";
import type { ResolvedTask, TaskManifest } from "../manifest/types.js";
import type { VerificationRecord } from "../verify/record.js";
import { describeTask, renderTaskTable } from "./task-table.js";

const manifest = {
  id: "toy-loss",
  paper: { title: "A | pipe", url: "https://example.org/p", year: 2024 },
  category: "Training Objectives & Optimization Techniques",
  upstream: { repo: "https://github.com/o/n", commit: "a".repeat(40), license: "MIT" },
  targets: [{ file: "m.py", symbol: "loss", mode: "body" }],
} as unknown as TaskManifest;
const task: ResolvedTask = { manifest, dir: "/x/toy-loss", manifestPath: "/x/toy-loss/task.json" };

function record(ok: boolean, hash: string): VerificationRecord {
  return {
    ok,
    inputs: { task: hash },
    failure: ok ? undefined : { step: "mutants", reason: "weak", kind: "check" },
    steps: {
      reference: { runs: [{ duration_s: 1.0 }, { duration_s: 2.0 }] },
      mutants: { kill_ratio: 0.9, skipped: false },
    },
  } as unknown as VerificationRecord;
}

describe("describeTask", () => {
  it("says verified only for a passing record of the same inputs", () => {
    expect(describeTask(task, record(true, "h1"), "h1")).toMatchObject({ status: "verified", kill_ratio: 0.9, test_time_s: 1.5 });
    expect(describeTask(task, record(true, "h0"), "h1").status).toBe("stale");
    expect(describeTask(task, record(false, "h1"), "h1").status).toBe("failed at mutants");
    expect(describeTask(task, undefined, "h1")).toMatchObject({ status: "unverified", kill_ratio: null, test_time_s: null });
  });

  it("reports the kind and the instruction levels the manifest gives", () => {
    expect(describeTask(task, undefined, "h")).toMatchObject({ kind: null, levels: ["paper"] });
    const both: ResolvedTask = { ...task, manifest: { ...manifest, kind: "glue", kind_reason: "r", hints: "hints.md" } as TaskManifest };
    expect(describeTask(both, undefined, "h")).toMatchObject({ kind: "glue", levels: ["paper", "hinted"] });
    expect(renderTaskTable([describeTask(both, undefined, "h")])).toContain("| glue | paper, hinted |");
  });
});

describe("renderTaskTable", () => {
  it("escapes cells and links the pinned commit", () => {
    const md = renderTaskTable([describeTask(task, record(true, "h"), "h")]);
    expect(md).toContain("A \\| pipe (2024)");
    expect(md).toContain(`[\`aaaaaaaaaa\`](https://github.com/o/n/tree/${"a".repeat(40)})`);
    expect(md).toContain("1 task (1 core, 0 extended, 0 method), 1 verified.");
    expect(md.split("\n").filter((l) => l.startsWith("| `toy-loss`"))).toHaveLength(1);
  });

  it("shows the core and the extended set in sections of their own", () => {
    const extended: ResolvedTask = { ...task, manifest: { ...manifest, id: "more-loss", set: "extended" } as TaskManifest };
    const rows = [describeTask(task, record(true, "h"), "h"), describeTask(extended, undefined, "h")];
    expect(rows.map((r) => r.set)).toEqual(["core", "extended"]);
    const md = renderTaskTable(rows);
    const core = md.slice(md.indexOf("## Core set"), md.indexOf("## Extended set"));
    const ext = md.slice(md.indexOf("## Extended set"));
    expect(md).toContain("2 tasks (1 core, 1 extended, 0 method), 1 verified.");
    expect(core).toContain("| `toy-loss`");
    expect(core).not.toContain("more-loss");
    expect(ext).toContain("| `more-loss`");
    const onlyCore = renderTaskTable(
      rows.filter((r) => r.set === "core"),
      "core",
    );
    expect(onlyCore).not.toContain("## Extended set");
    expect(onlyCore).toContain("lmr list --format md --set core --write");
    expect(renderTaskTable([rows[0]!])).toContain("No tasks in this set yet.");
  });
});
