// Vitest for `npm run mutate:unit`: only the in-process and pure tests, so each mutant runs in milliseconds.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/queue/run-completion.test.ts',
      'test/queue/pipe-protocol.test.ts',
      'test/queue/que-index.test.ts',
      'test/queue/message-index.test.ts',
      'test/queue/queue-runs.test.ts',
      'test/queue/queue-ops.test.ts',
      'test/errors.test.ts',
      'test/ipc/answer.test.ts',
      'test/ipc/queue-client.test.ts',
    ],
    pool: 'forks',
    testTimeout: 30_000,
  },
});
