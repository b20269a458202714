// npm start's own lines: a person's, on stderr, so that piped its stdout is rq-mgr's JSON log lines alone; and a second start on a root says only that one runs.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rootPaths } from '../../src/config/paths.js';
import { PROJECT, type TestRoot, makeRoot, waitFor } from '../helpers/rq-root.js';
import { stopChild } from '../helpers/process-groups.js';

const START = path.join(PROJECT, 'bin', 'rq-start');
let first: ChildProcess | undefined;
let t: TestRoot | undefined;
let other: string | undefined;

afterEach(async () => {
  await stopChild(first);
  first = undefined;
  await t?.cleanup();
  t = undefined;
  if (other) await fsp.rm(other, { recursive: true, force: true });
  other = undefined;
});

/** bin/rq-start run to its end, its two streams apart. */
function runStart(root: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [START, '--root', root], { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

/** rq-start running on a test root, into pipes; resolves once it says it is ready. */
async function startFirst(): Promise<ChildProcess> {
  t = await makeRoot();
  const child = spawn(process.execPath, [START, '--root', t.root], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stdout!.resume();
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  await waitFor(() => /^rq: ready/m.test(err), 'the first rq-start to say it is ready', 30_000);
  return child;
}

describe('npm start', () => {
  it('a second start on a running root says that one runs, in one line on stderr, and nothing it did not do', async () => {
    first = await startFirst();
    const r = await runStart(t!.root);
    expect(r).toEqual({ code: 1, stdout: '', stderr: `rq-mgr: already running with pid ${first.pid} (${rootPaths(t!.root).mgrPid})\n` });
  }, 60_000);

  it("the first run's install says what it made on stderr: piped, stdout holds no line that is not JSON", async () => {
    first = await startFirst();
    // A root with no config yet, whose pid file names the running rq-start: the start installs the root, then stops at the pid file, binding no port.
    other = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-start-'));
    await fsp.mkdir(path.join(other, 'config'));
    await fsp.writeFile(rootPaths(other).mgrPid, `${first.pid}\n`);
    const r = await runStart(other);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toEqual(expect.arrayContaining(['Installed queue relay', 'Installed timer cleaner']));
    expect(lines.at(-1)).toBe(`rq-mgr: already running with pid ${first.pid} (${rootPaths(other).mgrPid})`);
    await fsp.access(rootPaths(other).configFile);
  }, 60_000);
});
