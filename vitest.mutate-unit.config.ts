// Vitest for `npm run mutate:unit`: only the in-process and pure tests, so each mutant runs in milliseconds.
import { defineConfig } from 'vitest/config';

// RQ_UNIT_TESTS (comma-separated globs) scopes a run to one folder's own tests (docs/testing.md).
const scoped = process.env.RQ_UNIT_TESTS?.split(',').filter(Boolean);

export default defineConfig({
  test: {
    include: scoped ?? [
      'test/queue/rules/run-completion.test.ts',
      'test/queue/rules/pipe-protocol.test.ts',
      'test/queue/launch/line-splitter.test.ts',
      'test/queue/index/que-index.test.ts',
      'test/queue/index/message-index.test.ts',
      'test/queue/queue-runs.test.ts',
      'test/queue/queue-ops.test.ts',
      'test/errors.test.ts',
      'test/ipc/answer.test.ts',
      'test/ipc/queue-client.test.ts',
    ],
    pool: 'forks',
    // Stryker's runner asks for worker threads; some of these tests need processes (umask, signals).
    poolMatchGlobs: [['**/*.test.ts', 'forks']],
    testTimeout: 30_000,
  },
});
