import { defineConfig } from "vitest/config";

/**
 * The docker-backend suite (`npx vitest run --config vitest.docker.config.ts`):
 * tests that need a Docker daemon and build or use images. Kept out of
 * `npm test` so that stays under 5 minutes on 2 cores; .ci/run runs it after
 * starting dockerd and importing the Debian base. Each file skips, with the
 * reason printed, where no daemon answers.
 */
export default defineConfig({
  test: {
    include: ["test/**/*.docker.ts"],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    pool: "forks",
    fileParallelism: false,
  },
});
