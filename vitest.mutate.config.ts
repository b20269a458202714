// Vitest as `npm run mutate` runs it: dist/ is built once by Stryker's buildCommand, and every
// spawned daemon runs the active mutant and reports its coverage (test/mutation/).
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// RQ_MUTATE_TESTS (comma-separated globs) scopes a whole-process run to the tests that drive a few
// modules (docs/testing.md): daemons still carry the mutants, in minutes instead of hours.
const scoped = process.env.RQ_MUTATE_TESTS?.split(',').filter(Boolean);

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    ...(scoped ? { include: scoped } : {}),
    globalSetup: [],
    setupFiles: ['test/helpers/kill-guard.ts', 'test/mutation/stryker-children.ts'],
    reporters: ['default'],
    // Instrumented code on a machine loaded by Stryker's own workers: latency bounds stretch (test/helpers/time-budget.ts).
    env: { RQ_TEST_TIME_SCALE: '5' },
    // Stryker's runner asks for worker threads; rq's tests need processes (umask, signals, env per worker).
    poolMatchGlobs: [['**/*.test.ts', 'forks']],
  },
});
