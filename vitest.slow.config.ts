import { defineConfig } from "vitest/config";
import { SLOW_TEST_FILES } from "./vitest.slow-files.js";

/** The slow end-to-end files (`npm run test:slow`; .ci/run runs them after `npm test`). */
export default defineConfig({
  test: {
    include: SLOW_TEST_FILES,
    testTimeout: 480_000,
    hookTimeout: 480_000,
    pool: "forks",
  },
});
