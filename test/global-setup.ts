// Builds dist/ once before the suite: integration tests run the real compiled daemons and CLI.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  try {
    execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  } catch {
    // Unit tests can still run; tests of the compiled programs fail on their own with the cause.
    // .ci/run builds before testing, so a broken build never passes CI.
    process.stderr.write('\nrq test setup: the build failed (see above); tests that run dist/ will fail\n\n');
  }
}
