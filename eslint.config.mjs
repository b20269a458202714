// Lint for `npm run lint` (run by .ci/run): typescript-eslint's recommended rules plus the house rules of docs/architecture.md.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import house from './tools/eslint/house-rules.mjs';

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', 'reports/**', 'test-output/**', '.bench/**', '.stryker-tmp/**', 'queues/**', 'scandir/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { files: ['**/*.mjs', '**/*.js'], languageOptions: { globals: globals.node } },
  { files: ['src/web/public/**/*.js'], languageOptions: { globals: globals.browser } },
  {
    plugins: { house },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'house/no-issue-numbers': 'error',
      // A getter shared by many objects reads its owner through `self` while `this` is the object read.
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['self'] }],
      // Control bytes in a pattern are what rq refuses or escapes; each such pattern says so.
      'no-control-regex': 'off',
      'max-lines': ['error', { max: 300 }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/errors.ts'],
    rules: { 'house/no-bare-error': 'error' },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/ipc/**'],
    rules: { 'house/no-reply-parsing': 'error' },
  },
  {
    // The spool (src/spool/) makes the moves it is asked for; the index (src/queue/index/) is what changes;
    // disk-full.ts wraps the spool's writes to wait for space. Everyone else asks the transitions module.
    files: ['src/**/*.ts'],
    ignores: ['src/spool/**', 'src/queue/transitions/**', 'src/queue/index/**', 'src/queue/status/disk-full.ts'],
    rules: { 'house/only-transitions-move': 'error' },
  },
);
