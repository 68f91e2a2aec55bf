// `--import`ed by the candidate's worker: the TypeScript hooks over the tree (ts-hooks.mjs),
// with the import log posted back for verify's environment step.
import { register } from "node:module";
import { MessageChannel } from "node:worker_threads";

const args = JSON.parse(process.env.LMR_CANDIDATE ?? "{}");
delete process.env.LMR_CANDIDATE;
const { port1, port2 } = new MessageChannel();
export const imports = [];
port1.on("message", (m) => imports.push(m));
port1.unref();
register("./ts-hooks.mjs", { parentURL: import.meta.url, data: { root: args.tree, mount: "", port: port2 }, transferList: [port2] });
globalThis[Symbol.for("lmr.candidate")] = { args, imports };
