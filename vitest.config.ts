import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/helpers/kill-guard.ts'],
    // The JSON report lets .ci/run print one `N passed, N failed` line for the whole run.
    reporters: ['default', ['json', { outputFile: 'test-output/vitest.json' }]],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests start real daemons and scripts; two cores are shared between them.
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
  },
});
