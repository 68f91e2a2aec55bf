// `node --import` this to run a script over TypeScript sources (lmr record's JavaScript
// generators): the TypeScript loader hooks of ts-hooks.mjs, without a test run or a channel.
import { register } from "node:module";

register("./ts-hooks.mjs", { parentURL: import.meta.url, data: {} });
