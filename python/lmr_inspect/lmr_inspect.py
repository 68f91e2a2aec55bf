"""lmr's tasks as an Inspect AI task (written next to tasks/ by `lmr export --format inspect`).

    inspect eval lmr_inspect.py --model <model> [-T sandbox=docker|local] [-T tasks=ID,ID]
                                [-T message_limit=N] [--epochs K]

One Sample per lmr task: id = the task id, input = its instruction (at the level exported),
metadata = tasks/<id>/sample.json. The sandbox is Docker built from the task's environment
(tasks/<id>/compose.yaml: lmr's image with the masked workspace at /app, no network), or
Inspect's local sandbox (-T sandbox=local: the workspace files copied into a temporary folder
on this machine; for machines without Docker Compose v2, with no isolation at all).

The scorer grades what the solver left in the sandbox's workspace with lmr's grader: it copies
tasks/<id>/tests/lmr (grade.py, the hidden tests and fixtures, lmr's harness) into the sandbox
only after the solver is done, runs grade.py there, and scores C when the verdict is "passed",
I otherwise, with the verdict, its reason and the test counts in the score's metadata.
--epochs K repeats every sample; the pass_at_K reducer then gives pass@K.
"""
import io
import json
import tarfile
import uuid
from pathlib import Path

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, basic_agent
from inspect_ai.tool import bash
from inspect_ai.util import sandbox as current_sandbox

HERE = Path(__file__).resolve().parent
TASKS = HERE / "tasks"
IMAGE_PYTHON = "/opt/lmr/venv/bin/python"


def _note(kind, meta):
    where = meta["workdir"] if kind == "docker" else "the current folder"
    return (
        "\n\n---\nThe repository is in %s. Edit the target files there (%s); "
        "when you are done, call submit()." % (where, ", ".join(meta["targets"]))
    )


def _samples(kind, only):
    for d in sorted(p for p in TASKS.iterdir() if (p / "sample.json").is_file()):
        meta = json.loads((d / "sample.json").read_text(encoding="utf-8"))
        if only and meta["id"] not in only:
            continue
        files = {}
        if kind == "local":
            ws = d / "environment" / "workspace"
            files = {str(p.relative_to(ws)): str(p) for p in ws.rglob("*") if p.is_file()}
        yield Sample(
            id=meta["id"],
            input=(d / "instruction.md").read_text(encoding="utf-8") + _note(kind, meta),
            metadata=meta,
            files=files,
            sandbox=("docker", str(d / "compose.yaml")) if kind == "docker" else "local",
        )


def _kit_tar(task_id):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(str(TASKS / task_id / "tests" / "lmr"), arcname=".")
    return buf.getvalue()


@scorer(metrics=[accuracy(), stderr()])
def lmr_grader(kind="docker", python="python3", node="node"):
    """Grades the sandbox's workspace with lmr's grader (tests/lmr/grade.py) inside the sandbox."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        sb = current_sandbox()
        root = "root" if kind == "docker" else None
        workspace = (await sb.exec(["pwd"])).stdout.strip()
        kit = "/tmp/lmr-kit-%s" % uuid.uuid4().hex
        await sb.write_file(kit + ".tar.gz", _kit_tar(state.sample_id))
        unpack = await sb.exec(["sh", "-c", 'mkdir -p "$1" && tar -xzf "$1.tar.gz" -C "$1" && rm -f "$1.tar.gz"', "sh", kit], user=root)
        if not unpack.success:
            return Score(value=INCORRECT, explanation="infra: cannot unpack the grader: " + unpack.stderr, metadata={"verdict": "infra"})
        if kind == "docker":
            interp = IMAGE_PYTHON
            extra = []
        else:
            interp = python
            extra = ["--interpreter", node if meta["runner"] == "node-test" else python]
        cmd = [interp, "-s", "-B", kit + "/grade.py", "--kit", kit, "--workspace", workspace, "--out", kit + ".json", *extra]
        run = await sb.exec(cmd, user=root, timeout=int(meta["timeout_total_s"]) + 300)
        try:
            result = json.loads(await sb.read_file(kit + ".json"))
        except Exception as e:  # no result file: our side broke, never a pass
            result = {"verdict": "infra", "reason": "grade.py wrote no result (%s): %s" % (e, (run.stderr or run.stdout)[-2000:]), "counts": {}, "tests": []}
        await sb.exec(["rm", "-rf", kit, kit + ".json"], user=root)
        passed = result["verdict"] == "passed"
        return Score(
            value=CORRECT if passed else INCORRECT,
            answer=result["verdict"],
            explanation=result.get("reason") or result["verdict"],
            metadata={"verdict": result["verdict"], "reason": result.get("reason"), "counts": result.get("counts", {}),
                      "tests": [{"id": t["id"], "status": t["status"]} for t in result.get("tests", [])]},
        )

    return score


@task
def lmr(sandbox: str = "docker", tasks: str | list[str] = "", message_limit: int = 50, epochs: int = 1, python: str = "python3", node: str = "node"):
    """lmr's paper-code reproduction tasks: a ReAct agent with bash in the task's sandbox, graded by lmr."""
    if sandbox not in ("docker", "local"):
        raise ValueError("sandbox must be docker or local, got %r" % sandbox)
    # -T tasks=a,b arrives as a list, -T tasks=a as a string
    only = {t for t in (tasks if isinstance(tasks, (list, tuple)) else str(tasks).split(",")) if t}
    samples = list(_samples(sandbox, only))
    missing = only - {s.id for s in samples}
    if missing:
        raise ValueError("no exported task %s under %s" % (", ".join(sorted(missing)), TASKS))
    return Task(
        dataset=samples,
        solver=basic_agent(tools=[bash(timeout=600)], message_limit=message_limit),
        scorer=lmr_grader(sandbox, python, node),
        epochs=Epochs(epochs, ["mean", "pass_at_%d" % epochs]) if epochs > 1 else None,
    )
