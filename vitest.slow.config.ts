import { defineConfig } from "vitest/config";

/**
 * The slow end-to-end files (`npm run test:slow`; .ci/run runs them after `npm test`): every
 * file named *.slow.test.ts. A test file too slow for `npm test`'s 5-minute budget on 2 cores
 * (long end-to-end runs: the CONTRIBUTING worked example, kill and resume, the hack suite,
 * torch recordings, the masking sweeps, verify on real tasks) takes that name. vitest runs
 * files on cores - 1 workers, so on 2 cores a suite runs one file at a time.
 */
export default defineConfig({
  test: {
    include: ["src/**/*.slow.test.ts", "test/**/*.slow.test.ts"],
    testTimeout: 480_000,
    hookTimeout: 480_000,
    pool: "forks",
  },
});
