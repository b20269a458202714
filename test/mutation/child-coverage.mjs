// Preloaded (NODE_OPTIONS --import) into every Node process a test starts during Stryker's dry run:
// records which mutants that process reached, so daemon code counts as covered by the test that ran it.
import fs from 'node:fs';

/** The coverage file, or null for a process that may not write it (a test runs a client as user nobody). */
function openCoverage(file) {
  try {
    return fs.openSync(file, 'a');
  } catch {
    return null;
  }
}

const fd = process.env.RQ_MUTANT_COVERAGE ? openCoverage(process.env.RQ_MUTANT_COVERAGE) : null;
if (fd !== null) {
  // One line per pid first: the test worker signals these pids at each test's end.
  fs.writeSync(fd, `pid ${process.pid}\n`);
  let seen = new Set();
  const record = {
    set(target, key, value) {
      if (!seen.has(key)) {
        seen.add(key);
        // Synchronous and O_APPEND: a hit is on disk before the process can be killed mid-test.
        fs.writeSync(fd, `${key}\n`);
      }
      target[key] = value;
      return true;
    },
  };
  const ns = globalThis.__stryker__ ?? (globalThis.__stryker__ = {});
  ns.mutantCoverage = { static: new Proxy({}, record), perTest: {} };
  // A new test began: hits seen before must be reported again, or only the first test of a
  // long-lived daemon would count as covering them.
  process.on('SIGUSR2', () => {
    seen = new Set();
  });
}
