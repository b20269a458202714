import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests start real daemons and scripts; two cores are shared between them.
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
  },
});
