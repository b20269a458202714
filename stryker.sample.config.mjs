// StrykerJS for `npm run mutate:sample` (docs/testing.md): the whole suite against a seeded random sample of
// src/'s mutants, drawn by test/mutation/sample.mjs, which writes the ranges this config reads.
import fs from 'node:fs';
import base from './stryker.config.mjs';

const drawn = JSON.parse(fs.readFileSync(process.env.RQ_MUTATE_SAMPLE ?? 'reports/mutation-sample/drawn.json', 'utf8'));

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  plugins: [...base.plugins, './test/mutation/sample-only.mjs', './test/mutation/stream-results.mjs'],
  reporters: [...base.reporters, 'stream-results'],
  ignorers: [...base.ignorers, 'sample-only'],
  // Stryker's ranges are 1-based lines and 0-based columns, like babel's locations.
  mutate: Object.entries(drawn).flatMap(([file, locs]) => locs.map(([sl, sc, el, ec]) => `${file}:${sl}:${sc}-${el}:${ec}`)),
  incremental: false,
  jsonReporter: { fileName: 'reports/mutation-sample/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation-sample/mutation.html' },
};
