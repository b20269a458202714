// Builds what bin/ runs before the suite (dist/ by tsc, the CLI and queue bundles, the native addons when
// their sources changed): integration tests run the shipped programs, so a local edit must reach them.
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
  // The addons are optional (child_process, `sync -f` and node fs fallbacks), but once built they must match their
  // sources, and a checkout whose addons were built also builds one added since.
  const spool = (file: string) => path.join('src', 'spool', 'native', file);
  const spawn = (file: string) => path.join('src', 'queue', 'launch', 'native', file);
  // Each addon and its sources: three of the spool's share pool-job.h.
  const addons: [string, string[]][] = [
    [
      'rq_spawn.node',
      ['rq-spawn.c', 'rq-spawn-child.c', 'rq-spawn-child.h', 'rq-spawn-watch.c', 'rq-spawn-watch.h', 'rq-spawn-strings.c', 'rq-spawn-strings.h'].map(spawn),
    ],
    ['rq_syncfs.node', [spool('rq-syncfs.c'), spool('pool-job.h')]],
    ['rq_blanks.node', [spool('rq-blanks.c'), spool('pool-job.h')]],
    ['rq_fileops.node', [spool('rq-fileops.c'), spool('pool-job.h')]],
    ['rq_journal_sync.node', ['rq-journal-sync.c', 'rq-journal-thread.c', 'rq-journal-thread.h'].map(spool)],
  ];
  const release = path.join(root, 'build', 'Release');
  const stale =
    fs.existsSync(release) && addons.some(([addon, sources]) => sources.some((source) => mtime(path.join(root, source)) > mtime(path.join(release, addon))));
  if (stale) npmRun('build-native');
}
