// StrykerJS for `npm run mutate:unit` (docs/testing.md): the queue core's rules against its unit tests only,
// minutes instead of hours; a floor for the score `npm run mutate` measures with the whole suite.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-unit.config.ts', related: false },
  mutate: [
    'src/queue/rules/completion.ts',
    'src/queue/rules/pipe-protocol.ts',
    'src/queue/launch/line-splitter.ts',
    'src/queue/index/que-index.ts',
    'src/queue/coordination/dispatcher.ts',
    'src/queue/index/message-index.ts',
    'src/ipc/answer.ts',
    'src/ipc/queue-client.ts',
  ],
  buildCommand: undefined,
  incremental: false,
  reporters: ['progress', 'clear-text', 'json'],
  jsonReporter: { fileName: 'reports/mutation-unit/mutation.json' },
};
