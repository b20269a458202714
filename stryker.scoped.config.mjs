// StrykerJS scoped to a few modules and the tests that drive them (docs/testing.md): daemons are rebuilt
// with the mutants as in `npm run mutate`, but vitest runs only RQ_MUTATE_TESTS, one mutant at a time.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  // A scoped run's survivors say nothing about the tests it left out: never reuse them in a whole run.
  incremental: false,
  // Leaves a core for the rest of the machine; integration tests start daemons of their own.
  concurrency: 1,
  reporters: ['progress', 'clear-text', 'json'],
  jsonReporter: { fileName: 'reports/mutation-scoped/mutation.json' },
};
