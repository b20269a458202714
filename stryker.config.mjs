// StrykerJS for `npm run mutate` (docs/testing.md): vitest runs the suite, dist/ is rebuilt from the
// instrumented sources so daemons spawned by integration tests carry the mutants too.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  checkers: ['typescript'],
  plugins: ['@stryker-mutator/*', './test/mutation/ignore-logs.mjs'],
  ignorers: ['log-calls'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: ['src/**/*.ts'],
  // Stryker prepends `// @ts-nocheck` to the files it matches, rewriting them without their mode: the
  // executable fixture scripts under test/ must stay as they are (a rewritten verbs.mjs is SCRIPTERROR).
  disableTypeChecks: 'src/**/*.ts',
  buildCommand: 'npm run --silent build-js',
  coverageAnalysis: 'perTest',
  // A static mutant (module-level code run at import) needs the whole suite per mutant, ~5 min each.
  ignoreStatic: true,
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  ignorePatterns: ['/dist', '/.bench', '/reports', '/test-output', '/log/*', '/queues/*', '/scandir/*', '/timers/*', '/config/*', '/stryker-tmp'],
  concurrency: 2,
  dryRunTimeoutMinutes: 60,
  // Integration tests start daemons and scripts: a mutant may slow a test without hanging it.
  timeoutMS: 20_000,
  reporters: ['progress', 'clear-text', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // Not a dot dir: vitest's poolMatchGlobs (picomatch) never matches paths through one.
  tempDirName: 'stryker-tmp',
  cleanTempDir: 'always',
};
