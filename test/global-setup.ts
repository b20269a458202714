// Builds what bin/ runs before the suite (dist/ by tsc, the CLI bundle, the native spawner when its
// source changed): integration tests run the shipped programs, so a local edit must reach them.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function npmRun(script: string): void {
  try {
    execFileSync('npm', ['run', '--silent', script], { cwd: root, stdio: 'inherit' });
  } catch {
    // Tests of the compiled programs then fail on their own with the cause printed above;
    // .ci/run builds before testing, so a broken build never passes CI.
    process.stderr.write(`\nrq test setup: npm run ${script} failed (see above); tests that run its output will fail\n\n`);
  }
}

const mtime = (file: string): number => (fs.existsSync(file) ? fs.statSync(file).mtimeMs : 0);

export default function setup(): void {
  // tsc for dist/ and the one-file bundle bin/rq runs: without the bundle, a changed CLI text
  // passed its tests against a stale dist/cli/rq.cjs.
  npmRun('build-js');
  const addon = path.join(root, 'build', 'Release', 'rq_spawn.node');
  // The addon is optional (child_process fallback), but once built it must match its source.
  if (fs.existsSync(addon) && mtime(path.join(root, 'src', 'queue', 'native', 'rq-spawn.c')) > mtime(addon)) npmRun('build-native');
}
