// StrykerJS for listing src/'s mutants without testing them (test/mutation/sample.mjs draws from this list):
// every mutant "runs" `true`, a few minutes for all of them.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  testRunner: 'command',
  commandRunner: { command: 'true' },
  checkers: [],
  buildCommand: undefined,
  coverageAnalysis: 'off',
  ignoreStatic: false,
  incremental: false,
  reporters: ['json'],
  jsonReporter: { fileName: 'reports/mutation-list/mutation.json' },
};
