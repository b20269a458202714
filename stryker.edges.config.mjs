// StrykerJS for scoped unit runs without the type checker (docs/testing.md, "Features' edges"): both cores run
// mutants instead of one checking types, and each result is streamed as it comes, for runs cut short.
import unit from './stryker.unit.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...unit,
  checkers: [],
  plugins: [...unit.plugins, './test/mutation/stream-results.mjs'],
  reporters: ['progress', 'clear-text', 'json', 'stream-results'],
  jsonReporter: { fileName: 'reports/mutation-edges/mutation.json' },
};
