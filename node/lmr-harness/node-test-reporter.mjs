// lmr's node:test reporter (`--test-reporter`): turns the runner's events into signed
// records on the results channel and ends the process itself once every test file's suite
// has reported, so a timer or socket that code under test leaves open cannot hold the run.
//
// Ids: `<file relative to the run root>::<describe>…::<test>`. Reported are the tests that
// have no subtests, tests whose own code failed although they have subtests, and suites
// whose own code or hooks failed (a suite of a file that did not import is a collection
// error). Verdicts never come from text: only from these events.
import { importFailures } from "./bridge.mjs";
import { claimSender, takeOver } from "./channel.mjs";
import { findTampering } from "./tamper.mjs";

const send = claimSender();
const exit = process.reallyExit.bind(process);
const MAX_MESSAGE = 4000;

function short(text) {
  const s = String(text ?? "");
  return s.length <= MAX_MESSAGE ? s : `${s.slice(0, MAX_MESSAGE - 20)}\n...[truncated]`;
}

function describeError(err) {
  if (!err) return "";
  const cause = err.cause ?? err;
  if (err.failureType === "testTimeoutFailure") return `lmr: ${err.message}`;
  return short(cause?.stack ?? cause?.message ?? String(cause));
}

export default async function* lmrReporter(source) {
  const stack = []; // { name, hasChildren }
  const order = [];
  const results = new Map();
  let finishedFiles = 0;
  let collectErrors = 0;
  let done = false;

  const finish = () => {
    if (done) return;
    done = true;
    const args = takeOver("args") ?? {};
    const imports = [...(takeOver("imports") ?? []), ...(takeOver("candidate_imports") ?? [])];
    const tampered = findTampering(takeOver("snapshot") ?? []);
    send({ t: "collected", ids: order });
    if (args.reportImports) send({ t: "imports", modules: dedupeImports(imports) });
    const failed = collectErrors > 0 || [...results.values()].some((r) => r.raw_failed);
    const code = failed ? 1 : 0;
    send({ t: "done", exit: code, n_results: results.size, tampered });
    exit(code);
  };

  const report = (id, status, data) => {
    if (results.has(id)) return;
    const r = {
      status,
      time_s: Math.round((data.details?.duration_ms ?? 0) * 1000) / 1e6,
      message: status === "passed" ? null : describeError(data.details?.error),
      raw_failed: status === "failed" || status === "error",
    };
    if (data.skip !== undefined || data.todo !== undefined) {
      r.status = "skipped";
      r.raw_failed = false;
      r.message = short(typeof data.skip === "string" ? data.skip : typeof data.todo === "string" ? `todo: ${data.todo}` : null);
    }
    const failure = r.status === "failed" ? importFailures.find((f) => f.test === id) : undefined;
    if (failure) {
      // the code under test did not load in the candidate: an error of the run, not a failed check
      r.status = "error";
      r.message = short(`the code under test could not be imported in the candidate: ${failure.message}`);
      send({ t: "candidate_import_error", id, module: failure.module, missing: failure.missing, message: failure.message });
    }
    results.set(id, r);
    order.push(id);
    send({ t: "result", id, ...r });
    if (r.raw_failed && takeOver("args")?.bail) finish();
  };

  for await (const event of source) {
    if (done) continue;
    const { type, data } = event;
    if (type === "test:start") {
      if (stack.length > 0) stack[stack.length - 1].hasChildren = true;
      stack.push({ name: data.name, hasChildren: false });
    } else if (type === "test:pass" || type === "test:fail") {
      const names = stack.map((s) => s.name);
      const top = stack.pop() ?? { name: data.name, hasChildren: false };
      const id = names.join("::");
      const failureType = data.details?.error?.failureType;
      if (data.nesting === 0) {
        if (type === "test:fail" && failureType !== "subtestsFailed") {
          collectErrors++;
          // the error itself last, where a verdict's reason takes it from (as pytest's E line)
          const cause = data.details?.error?.cause ?? data.details?.error;
          const last = String(cause?.message ?? cause ?? "").split("\n")[0];
          send({ t: "collect_error", id: data.name, message: `${describeError(data.details?.error)}\n${cause?.name ?? "Error"}: ${last}` });
        }
        finishedFiles++;
      } else if (data.details?.type === "suite" || top.hasChildren) {
        // a suite or a test with subtests: reported only when its own code or a hook failed
        if (type === "test:fail" && failureType !== "subtestsFailed") report(id, "error", data);
      } else if (type === "test:pass") {
        report(id, "passed", data);
      } else {
        report(id, failureType === "hookFailure" ? "error" : "failed", data);
      }
    }
    const expected = takeOver("suites");
    if (expected !== undefined && finishedFiles >= expected) finish();
  }
  finish();
}

function dedupeImports(list) {
  const seen = new Map();
  for (const m of list) if (!seen.has(m.module)) seen.set(m.module, m);
  return [...seen.values()].sort((a, b) => (a.module < b.module ? -1 : 1));
}
