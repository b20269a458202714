// Vitest setup for `npm run mutate`: carries Stryker's active mutant into the daemons tests spawn
// from dist/, and reports what those daemons covered, so integration tests count in the score.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';

interface StrykerNs {
  currentTestId?: string;
  mutantCoverage?: { static: Record<string, number>; perTest: Record<string, Record<string, number>> };
}

declare module 'vitest' {
  export interface ProvidedContext {
    mode: 'dry-run' | 'mutant';
    activeMutant: string;
  }
}

// Stryker's sandbox is made by mkdtemp (mode 0700): a test that runs a client as user nobody (to see
// EACCES) must be able to read dist/ there, as it can in a checkout.
if (process.cwd().includes(`${path.sep}stryker-tmp${path.sep}`)) fs.chmodSync(process.cwd(), 0o755);

/** Marks every process spawned from this test worker, so a file's leftovers can be found in /proc. */
const OWNER = `RQ_MUTATE_OWNER=${process.pid}`;
process.env.RQ_MUTATE_OWNER = String(process.pid);

/**
 * Ends every process this worker spawned that is still alive once a test file is done: a mutant that
 * breaks a daemon's shutdown must not outlive its test (orphans spinning under init load the machine
 * for hours and slow every later mutant into a timeout).
 */
function endLeftovers(): void {
  for (const name of fs.readdirSync('/proc')) {
    const pid = Number(name);
    if (!pid || pid === process.pid) continue;
    let env: string;
    try {
      env = fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (!env.split('\0').includes(OWNER)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone since the read.
    }
  }
}
// Registered first, so it runs after the file's own afterAll hooks (vitest runs after-hooks as a stack).
afterAll(endLeftovers);

const ns: StrykerNs = ((globalThis as { __stryker__?: StrykerNs }).__stryker__ ??= {});
const HOOK = path.join(path.dirname(fileURLToPath(import.meta.url)), 'child-coverage.mjs');

if (inject('mode') === 'mutant') {
  beforeAll(() => {
    // Instrumented code reads this at its first use in every process spawned from here.
    process.env.__STRYKER_ACTIVE_MUTANT__ = String(inject('activeMutant'));
  });
} else {
  const file = path.join(os.tmpdir(), `rq-mutant-coverage-${process.pid}-${Date.now()}`);
  fs.writeFileSync(file, '');
  process.env.RQ_MUTANT_COVERAGE = file;
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import=${HOOK}`.trim();
  let offset = 0;
  let lastTest: string | undefined;
  const pids = new Set<number>();

  /** Adds the mutants children reported since the last call to the given test's coverage. */
  const collect = (testId: string | undefined): void => {
    const text = fs.readFileSync(file, 'utf8').slice(offset);
    const end = text.lastIndexOf('\n') + 1;
    offset += Buffer.byteLength(text.slice(0, end));
    if (!testId) return;
    // A test file that loads no instrumented module in-process has no coverage object yet.
    ns.mutantCoverage ??= { static: {}, perTest: {} };
    const cov = (ns.mutantCoverage.perTest[testId] ??= {});
    for (const line of text.slice(0, end).split('\n')) {
      if (!line) continue;
      if (line.startsWith('pid ')) pids.add(Number(line.slice(4)));
      else cov[line] = (cov[line] ?? 0) + 1;
    }
  };

  afterEach(() => {
    lastTest = ns.currentTestId;
    collect(lastTest);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGUSR2');
      } catch {
        pids.delete(pid);
      }
    }
  });
  afterAll(() => {
    // Teardown after the last test (daemons stopping) belongs to the file's last test.
    collect(lastTest);
    fs.rmSync(file, { force: true });
  });
}
