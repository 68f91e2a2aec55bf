// What grader files get for `import … from "node:test"` (ts-hooks.mjs redirects files under
// the run root here): node:test itself, with `test`/`it` given the task's per-test limit as
// their default `timeout` (Node's own --test-timeout only applies under `node --test`).
// Subtests inherit their parent's limit; describe/suite get none, as a suite's timeout
// would bound all of its tests together. A test's own `timeout` option still wins.
import * as api from "node:test";
import { takeOver } from "./channel.mjs";

const perTestMs = Math.round((takeOver("args")?.perTestS ?? 0) * 1000);

function withLimit(fn) {
  if (!(perTestMs > 0)) return fn;
  return function limited(...args) {
    const out = [];
    let i = 0;
    if (typeof args[i] === "string" || args[i] === undefined) out.push(args[i++]);
    const opts = args[i] !== null && typeof args[i] === "object" ? args[i++] : {};
    out.push({ timeout: perTestMs, ...opts }, ...args.slice(i));
    return fn.apply(this, out);
  };
}

function withVariants(fn) {
  const wrapped = withLimit(fn);
  if (wrapped !== fn) for (const v of ["skip", "todo", "only"]) wrapped[v] = withLimit(fn[v]);
  return wrapped;
}

export * from "node:test";
export const test = withVariants(api.test);
export const it = withVariants(api.it);
for (const name of ["describe", "suite", "before", "after", "beforeEach", "afterEach", "run"]) test[name] = api[name];
Object.defineProperty(test, "mock", { get: () => api.mock, enumerable: true });
test.test = test;
test.it = it;
export default test;
