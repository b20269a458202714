// StrykerJS for `npm run mutate:web-security` (docs/testing.md): the whole suite against the web's auth,
// Host/Origin/IP checks, params, escaping, Range and script_dirs code; a scope that finishes in about an hour here.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  mutate: [
    'src/web/basic-auth.ts',
    'src/web/credentials.ts',
    'src/web/access-control.ts',
    'src/web/params.ts',
    'src/web/request-params.ts',
    'src/web/send-file.ts',
    'src/web/views/html.ts',
    'src/web/script-dirs.ts',
    'src/config/exposure.ts',
  ],
  incrementalFile: 'reports/mutation-web/incremental.json',
  jsonReporter: { fileName: 'reports/mutation-web/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation-web/mutation.html' },
};
