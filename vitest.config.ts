import { defineConfig } from "vitest/config";
import { SLOW_TEST_FILES } from "./vitest.slow-files.js";

// `npm test`: everything but the slow end-to-end files (vitest.slow.config.ts runs those).
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", ...SLOW_TEST_FILES],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
