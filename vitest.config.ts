import { defineConfig } from "vitest/config";

// `npm test`: everything but the slow end-to-end files, which are named *.slow.test.ts
// (vitest.slow.config.ts runs those; .ci/run runs both).
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/*.slow.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
