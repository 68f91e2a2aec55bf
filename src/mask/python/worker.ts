import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { LmrError } from "../../core/errors.js";

/** The interpreter to use: the argument, else $LMR_PYTHON, else `python3`. */
export function resolvePython(python?: string): string {
  return python ?? (process.env.LMR_PYTHON || "python3");
}

/**
 * One long-lived Python process answering requests in order. Protocol on
 * stdin: a JSON header line, then `size` raw bytes when the header has a
 * size. One JSON line per request on stdout. Ops: `compile` (compile() the
 * bytes or the file at `path`) and `probe` (ast.parse + compile, then
 * describe the functions/classes: qualified name, line, decorators,
 * arguments, return annotation, docstring, optionally the body).
 */
const WORKER_PROGRAM = String.raw`
import ast, json, sys, warnings
warnings.simplefilter("ignore")
SCOPES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, getattr(ast, "TryStar", ast.Try))
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

def index(stmts, prefix, out):
    for s in stmts:
        if isinstance(s, DEFS):
            q = prefix + s.name
            out.append((q, s))
            index(s.body, q + ".", out)
        elif isinstance(s, SCOPES):
            for field in ("body", "orelse", "finalbody"):
                index(getattr(s, field, []), prefix, out)
            for h in getattr(s, "handlers", []):
                index(h.body, prefix, out)
        elif isinstance(s, ast.Match):
            for c in s.cases:
                index(c.body, prefix, out)

def describe(q, n, with_body):
    d = {"name": q, "line": n.lineno, "end_line": n.end_lineno,
         "kind": "class" if isinstance(n, ast.ClassDef) else "function",
         "decorators": [ast.dump(x) for x in n.decorator_list],
         "doc": ast.get_docstring(n, clean=False)}
    if isinstance(n, ast.ClassDef):
        d["bases"] = [ast.dump(x) for x in n.bases + n.keywords]
    else:
        d["async"] = isinstance(n, ast.AsyncFunctionDef)
        d["args"] = ast.dump(n.args)
        d["returns"] = ast.dump(n.returns) if n.returns else None
    if with_body:
        d["body"] = [ast.dump(x) for x in n.body]
    return d

def failure(e):
    if isinstance(e, SyntaxError):
        return {"ok": False, "error": {"type": type(e).__name__, "message": str(e.msg), "line": e.lineno, "column": e.offset}}
    return {"ok": False, "error": {"type": type(e).__name__, "message": str(e)}}

def handle(req, data):
    name = req.get("name") or req.get("path") or "<source>"
    try:
        if req["op"] == "compile":
            compile(data, name, "exec", dont_inherit=True)
            return {"ok": True}
        tree = ast.parse(data, name)
        compile(tree, name, "exec", dont_inherit=True)
    except Exception as e:
        return failure(e)
    found = []
    index(tree.body, "", found)
    wanted = req.get("targets")
    if wanted is not None:
        keys = {(q, line) for q, line in wanted}
        found = [(q, n) for q, n in found if (q, n.lineno) in keys]
    return {"ok": True, "defs": [describe(q, n, req.get("body", False)) for q, n in found]}

def main():
    inp, out = sys.stdin.buffer, sys.stdout
    while True:
        header = inp.readline()
        if not header:
            return
        req = json.loads(header)
        try:
            if "size" in req:
                data = inp.read(req["size"])
            else:
                with open(req["path"], "rb") as fh:
                    data = fh.read()
            resp = handle(req, data)
        except Exception as e:
            resp = failure(e)
        out.write(json.dumps(resp) + "\n")
        out.flush()

main()
`;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class PythonWorker {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending: Pending[] = [];
  private buffered = "";
  private stderrTail = "";
  private failure: LmrError | undefined;
  private readonly exited: Promise<void>;

  constructor(readonly python: string = resolvePython()) {
    this.child = spawn(python, ["-I", "-c", WORKER_PROGRAM], { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => this.receive(chunk));
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-4000);
    });
    // A dead worker is reported through the pending requests; the write error itself adds nothing.
    this.child.stdin.on("error", () => undefined);
    this.exited = new Promise((resolve) => {
      this.child.on("error", (err) => {
        this.fail(`cannot start Python "${python}": ${err.message}`);
        resolve();
      });
      this.child.on("close", (code, signal) => {
        this.fail(`Python "${python}" exited (${signal ?? `code ${code}`})${this.stderrTail ? `: ${this.stderrTail.trim()}` : ""}`);
        resolve();
      });
    });
  }

  /** Sends one request; answers come back in request order. Call `drained()` between requests to bound memory. */
  request<T>(header: Record<string, unknown>, body?: string | Uint8Array): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const payload = body === undefined ? undefined : typeof body === "string" ? Buffer.from(body, "utf8") : body;
    const line = JSON.stringify(payload === undefined ? header : { ...header, size: payload.length }) + "\n";
    const answer = new Promise<T>((resolve, reject) => this.pending.push({ resolve: resolve as (v: unknown) => void, reject }));
    this.child.stdin.write(line);
    if (payload !== undefined) this.child.stdin.write(payload);
    return answer;
  }

  /** Resolves once the pipe to Python has room again (or the worker is gone). */
  async drained(): Promise<void> {
    if (this.failure || !this.child.stdin.writableNeedDrain) return;
    await Promise.race([once(this.child.stdin, "drain"), this.exited]);
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    await this.exited;
  }

  private receive(chunk: string): void {
    this.buffered += chunk;
    let nl: number;
    while ((nl = this.buffered.indexOf("\n")) >= 0) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      const waiter = this.pending.shift();
      if (!waiter) continue;
      try {
        waiter.resolve(JSON.parse(line));
      } catch (err) {
        waiter.reject(err);
      }
    }
  }

  private fail(message: string): void {
    this.failure ??= new LmrError({ code: "mask/python-unavailable", kind: "infra", message, hint: "set LMR_PYTHON to a working Python 3 interpreter" });
    for (const p of this.pending.splice(0)) p.reject(this.failure);
  }
}
