import { defineConfig } from "vitest/config";

/**
 * The Redis queue's fault suite (`npx vitest run --config vitest.queue.config.ts`):
 * kill -9 of a worker, of the coordinator, and a Redis restart, each waiting out
 * locks and reconnects, so kept out of `npm test`. .ci/run runs it after
 * installing redis-server; each test starts its own server on a free port and
 * skips, with the reason printed, where redis-server is missing.
 */
export default defineConfig({
  test: {
    include: ["test/**/*.queue.ts"],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    pool: "forks",
    fileParallelism: false,
  },
});
