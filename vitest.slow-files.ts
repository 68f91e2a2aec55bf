/**
 * Test files too slow for `npm test`'s 5-minute budget on 2 cores: long end-to-end
 * runs (the CONTRIBUTING worked example, kill and resume, the hack suite, torch
 * recordings, the stdlib masking sweep, verify on the broken tasks). `npm run test:slow` runs them, and so does
 * .ci/run after `npm test`; nothing here is skipped in CI. (vitest runs files on
 * cores - 1 workers, so on 2 cores npm test is one file at a time: measured 376 s
 * quiet with 80 files, before verify.test, run-tests and eval-cli moved here.)
 */
export const SLOW_TEST_FILES = [
  "test/agent/agent-cli.test.ts",
  "test/ci/ci-pr-flow.test.ts",
  "test/contributing/contributing.test.ts",
  "test/eval/eval-cli.test.ts",
  "test/eval/eval-formats.test.ts",
  "test/eval/eval-models.test.ts",
  "test/eval/kill-resume.test.ts",
  "test/eval/shard-merge.test.ts",
  "test/generate/generate-cli.test.ts",
  "test/hack/hack-suite.test.ts",
  "test/hack/ts-hack.test.ts",
  "test/interop/import-lmr-bench.test.ts",
  "test/judge/judge-e2e.test.ts",
  "test/mask/stdlib-sweep.test.ts",
  "test/mask/ts-sweep.test.ts",
  "test/paper/paper-fetch.test.ts",
  "test/queue/queue-eval.test.ts",
  "test/record/record-conftest.test.ts",
  "test/record/record-errors.test.ts",
  "test/record/record-generators.test.ts",
  "test/record/record-methods.test.ts",
  "test/record/record-mutations.test.ts",
  "test/record/record-scaffold.test.ts",
  "test/record/record-torch.test.ts",
  "test/runner/node-test-run.test.ts",
  "test/runner/run-tests.test.ts",
  "test/verify/task-standard.test.ts",
  "test/verify/toolkit-identity.test.ts",
  "test/verify/verify.test.ts",
  "test/interop/export-inspect.test.ts",
];
