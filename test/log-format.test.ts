// How the daemons' logs look: one readable line each on a terminal (npm start under a real pseudo-terminal,
// `script` from util-linux), JSON lines into a pipe, RQ_LOG_FORMAT over both; and a fresh start that says
// only what a user needs, with no warning.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { logFormat, prettyLine } from '../src/log-format.js';
import { PROJECT, freePort, waitFor } from './helpers/rq-root.js';

describe('logFormat', () => {
  it('takes RQ_LOG_FORMAT when it says json or pretty; otherwise JSON for anything but a terminal', () => {
    const file = fs.openSync('/dev/null', 'w');
    try {
      expect(logFormat(file, {})).toBe('json');
      expect(logFormat(file, { RQ_LOG_FORMAT: 'pretty' })).toBe('pretty');
      expect(logFormat(file, { RQ_LOG_FORMAT: 'fancy' })).toBe('json');
      expect(logFormat(undefined, {})).toBe('json');
    } finally {
      fs.closeSync(file);
    }
    expect(logFormat(1, { RQ_LOG_FORMAT: 'json' })).toBe('json');
  });

  it('writes a JSON line as one line: time, level, name, message, the other fields', () => {
    const line = prettyLine(false)(`${JSON.stringify({ level: 40, time: Date.UTC(2026, 0, 2, 3, 4, 5), pid: 7, name: 'rq-mgr', queue: 'q', msg: 'something odd' })}\n`);
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\] WARN \(rq-mgr\): something odd \{"queue":"q"\}\n$/);
  });
});

const ANSI = /\x1b\[[0-9;]*m/g;
let root: string | undefined;
let child: ChildProcess | undefined;

afterEach(async () => {
  const pid = root ? Number(await fsp.readFile(path.join(root, 'config', 'queuemgr.pid'), 'utf8').catch(() => '0')) : 0;
  if (pid > 0 && child?.exitCode === null) {
    const gone = new Promise((r) => child!.once('exit', r));
    process.kill(pid, 'SIGTERM');
    await gone;
  }
  if (root) await fsp.rm(root, { recursive: true, force: true });
  root = undefined;
  child = undefined;
});

/** A fresh root as `rq-install` makes it (the built-in queues and the cleaner timer), on a port of its own. */
async function freshRoot(): Promise<string> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-logs-'));
  const install = spawn(process.execPath, [path.join(PROJECT, 'bin', 'rq-install'), '--root', dir, '--port', String(await freePort())], { stdio: 'ignore' });
  expect(await new Promise((r) => install.once('exit', r))).toBe(0);
  return dir;
}

/** The environment of a user's shell: no log settings of the test run's own. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm' };
  delete env.RQ_LOG_LEVEL;
  delete env.RQ_LOG_FORMAT;
  delete env.RQ_ENV;
  return env;
}

/** Starts `argv` with its output collected; resolves once `done` holds for what came so far and the cleaner's first message has run. */
async function startAndSettle(argv: string[]): Promise<() => string> {
  let out = '';
  child = spawn(argv[0], argv.slice(1), { env: userEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  await waitFor(() => out.includes('rq-mgr started'), 'rq-mgr to say it started', 30_000);
  // The cleaner timer fires at start: once its message is done, the delivery that used to warn has happened.
  const done = path.join(root!, 'queues', 'cleaner', 'done');
  await waitFor(async () => (await fsp.readdir(done, { recursive: true }).catch(() => [])).some((e) => String(e).endsWith('stdio.log')), 'the cleaner timer message to run', 30_000);
  return () => out;
}

describe('a fresh start', () => {
  it('in a terminal: a few pretty lines, none at warn or above', async () => {
    root = await freshRoot();
    const out = await startAndSettle(['script', '-qfec', `${process.execPath} ${path.join(PROJECT, 'bin', 'rq-start')} --root ${root}`, '/dev/null']);
    const lines = out().replace(ANSI, '').split(/\r?\n/).filter((l) => l.trim() !== '');
    expect(lines.some((l) => l.startsWith('{')), lines.join('\n')).toBe(false);
    expect(lines.filter((l) => /\b(WARN|ERROR|FATAL)\b/.test(l)), lines.join('\n')).toEqual([]);
    expect(lines.length, lines.join('\n')).toBeLessThan(10);
    expect(lines[0]).toMatch(/^rq: root .*; web UI http:\/\/127\.0\.0\.1:\d+\/ ; Ctrl-C stops$/);
    expect(lines.find((l) => l.includes('rq-mgr started'))).toMatch(/^\[\d\d:\d\d:\d\d\] INFO \(rq-mgr\): rq-mgr started .*"queues":\["cleaner","debug","relay","rq_router","webhook"\]/);
  }, 90_000);

  it('into a pipe: JSON lines, every process at info, and still no warning', async () => {
    root = await freshRoot();
    const out = await startAndSettle([process.execPath, path.join(PROJECT, 'bin', 'rq-start'), '--root', root]);
    await waitFor(() => out().includes('"timer message sent"'), 'the timers to log the delivery', 30_000);
    const json = out()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; name: string; msg: string });
    expect(json.length).toBeGreaterThan(5);
    expect(json.filter((l) => l.level >= 40)).toEqual([]);
    expect(json.map((l) => l.name.split(' ')[0])).toEqual(expect.arrayContaining(['rq-mgr', 'rq-timers', 'rq-que']));
  }, 90_000);
});
