// Preloaded (`--import`) before lmr's node:test entry: opens the results channel (the key
// from stdin), says hello, registers the TypeScript and import-log hooks, snapshots what
// code under test could rebind, and makes node:test load our reporter now, so that the
// reporter has claimed the channel before the first test file (and the code it imports)
// runs. Every test start is sent from a root beforeEach hook at once, for the parent's
// per-test watchdog (the reporter sees events only later).
import nodeModule, { register, syncBuiltinESMExports } from "node:module";
import inspector from "node:inspector";
import { after, afterEach, before, beforeEach } from "node:test";
import { MessageChannel } from "node:worker_threads";
import { handOver, openChannel, parseArgs, reporterReady } from "./channel.mjs";
import { takeSnapshot } from "./tamper.mjs";

const args = parseArgs(process.argv.slice(2));
const send = await openChannel(args);
const exit = process.reallyExit.bind(process);
send({ t: "hello", pid: process.pid, python: `node ${process.versions.node}`, executable: process.execPath });

const imports = [];
const { port1, port2 } = new MessageChannel();
port1.on("message", (m) => imports.push(m));
port1.unref();
const testApi = new URL("./node-test-api.mjs", import.meta.url).href;
register("./ts-hooks.mjs", { parentURL: import.meta.url, data: { root: args.root, mount: args.mount, port: port2, testApi }, transferList: [port2] });
// No later hooks: code under test could otherwise rewrite the grader's files as they load.
nodeModule.register = () => {
  throw new Error("lmr: module.register is not available to code under test");
};
// An in-process inspector session could read the channel key out of the harness's closures.
const noInspector = () => {
  throw new Error("lmr: node:inspector is not available to code under test");
};
// node:inspector/promises came with Node 19 (Debian bookworm's nodejs is 18)
const inspectorPromises = await import("node:inspector/promises").then(
  (m) => m.default,
  () => undefined,
);
for (const mod of [inspector, inspectorPromises].filter(Boolean)) {
  mod.Session = class {
    constructor() {
      noInspector();
    }
  };
  mod.open = noInspector;
}
syncBuiltinESMExports();
handOver("imports", imports);
handOver("args", args);

before(() => {});
// the id as the reporter will give it: <file>::<describe>…::<test> (Node < 20.16 has no
// fullName: there the start names the test alone, which only the per-test limit's message shows)
// the bridge to the candidate (loaded now, before any test file: the grader's files get this very module)
const bridge = await import(new URL("./bridge.mjs", import.meta.url).href);
beforeEach((t) => {
  const id = (t.fullName ?? t.name).split(" > ").join("::");
  bridge.setTest(id);
  send({ t: "start", id });
});
afterEach(() => bridge.afterTest());
if (args.reportImports) {
  after(async () => {
    const got = await bridge.report().catch(() => null);
    if (got && Array.isArray(got.imports)) handOver("candidate_imports", got.imports);
  });
}

const loaded = await Promise.race([reporterReady.then(() => true), new Promise((r) => setTimeout(() => r(false), 20_000).unref())]);
if (!loaded) {
  send({ t: "infra", reason: "the lmr node:test reporter did not load" });
  exit(3);
}
handOver("snapshot", takeSnapshot());
