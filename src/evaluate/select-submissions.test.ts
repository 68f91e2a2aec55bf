import { describe, expect, it } from "vitest";
import type { ResolvedTask } from "../manifest/types.js";
import { findNearIds, selectSubmissions } from "./select-submissions.js";
import type { Submission } from "./submissions.js";

const task = (id: string): ResolvedTask => ({ manifest: { id } as ResolvedTask["manifest"], dir: `/t/${id}`, manifestPath: `/t/${id}/task.json` });
let line = 0;
const row = (task_id: string, model: string, sample: string): Submission => ({
  task_id,
  model,
  sample,
  content: { kind: "patch", patch: "p" },
  origin: `s.jsonl:${++line}`,
});
const TASKS = ["pref-loss", "rouge-notebook", "trainer-class"].map(task);

describe("selectSubmissions", () => {
  it("keeps every (task, model) apart and declares each model's samples per task", () => {
    line = 0;
    const r = selectSubmissions({
      file: "s.jsonl",
      tasks: TASKS,
      submissions: [row("pref-loss", "a", "0"), row("pref-loss", "b", "0"), row("pref-loss", "a", "1"), row("rouge-notebook", "b", "0")],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    // a has 2 samples of pref-loss and none of rouge-notebook (graded as 1 invalid): counts per task
    expect(r.value.models).toEqual([
      { model: "a", dir: "a", samples: 2, task_samples: { "pref-loss": 2, "rouge-notebook": 1, "trainer-class": 1 } },
      { model: "b", dir: "b", samples: 1 },
    ]);
    expect(
      r.value.byTask
        .get("pref-loss")!
        .get("a")!
        .map((s) => s.sample),
    ).toEqual(["0", "1"]);
    expect(r.value.byTask.get("rouge-notebook")!.get("a")).toBeUndefined();
    expect(r.value.notes).toEqual([]);
  });

  it("cuts to --samples per (task, model)", () => {
    const r = selectSubmissions({
      file: "s.jsonl",
      tasks: TASKS,
      samples: 1,
      submissions: [row("pref-loss", "a", "0"), row("pref-loss", "a", "1"), row("pref-loss", "b", "0")],
    });
    expect(r.ok && r.value.models.map((m) => m.samples)).toEqual([1, 1]);
  });

  it("refuses an id that names no task, with the nearest ids and every line", () => {
    line = 0;
    const r = selectSubmissions({
      file: "s.jsonl",
      tasks: TASKS,
      submissions: [row("pref-loss", "a", "0"), row("pref-los", "a", "0"), row("pref-los", "a", "1"), row("zzz", "a", "0")],
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      {
        file: "s.jsonl:2",
        pointer: "/task_id",
        message: "no task has the id 'pref-los' (2 rows; also line 3); did you mean 'pref-loss'?",
        hint: expect.stringMatching(/fix the task id/),
      },
      { file: "s.jsonl:4", pointer: "/task_id", message: "no task has the id 'zzz'", hint: expect.any(String) },
    ]);
  });

  it("grades only the selection, and lists the rest without calling it unknown", () => {
    const r = selectSubmissions({
      file: "s.jsonl",
      tasks: TASKS.slice(0, 1),
      knownTaskIds: TASKS.map((t) => t.manifest.id),
      submissions: [row("pref-loss", "a", "0"), row("trainer-class", "a", "0"), row("trainer-class", "only-there", "0")],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.models.map((m) => m.model)).toEqual(["a"]);
    expect(r.value.notes.map((n) => n.message)).toEqual([
      "2 row(s) for 1 task(s) outside this run's selection are not graded: trainer-class",
      "model 'only-there' has rows only for tasks outside this run's selection; it is not graded",
    ]);
  });

  it("refuses empty submissions, and rows none of which is for the run's tasks", () => {
    expect(selectSubmissions({ file: "s.jsonl", tasks: TASKS, submissions: [] })).toMatchObject({
      ok: false,
      problems: [{ message: "the submissions hold no rows" }],
    });
    const none = selectSubmissions({
      file: "s.jsonl",
      tasks: TASKS.slice(0, 1),
      knownTaskIds: ["pref-loss", "trainer-class"],
      submissions: [row("trainer-class", "a", "0")],
    });
    expect(none).toMatchObject({ ok: false, problems: [{ message: "none of the rows is for a task of this run" }] });
  });
});

describe("findNearIds", () => {
  it("lists close ids, nearest first, and nothing for a far one", () => {
    expect(findNearIds("pref-los", ["pref-loss", "pref-lost", "rouge"])).toEqual(["pref-loss", "pref-lost"]);
    expect(findNearIds("completely-else", ["pref-loss"])).toEqual([]);
  });
});
