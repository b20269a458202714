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

  it('writes a JSON line as one line: time, level, name, message, then the other fields short (key=value, no JSON blob)', () => {
    const line = (o: Record<string, unknown>) =>
      prettyLine(false)(`${JSON.stringify({ level: 40, time: Date.UTC(2026, 0, 2, 3, 4, 5), pid: 7, hostname: 'h', name: 'rq-mgr', ...o })}\n`);
    expect(line({ queue: 'q', msg: 'something odd' })).toMatch(/^\[\d\d:\d\d:\d\d\] WARN \(rq-mgr\): something odd queue=q\n$/);
    expect(line({ level: 30, msg: 'rq-mgr started', root: '/srv/rq', queues: ['a', 'b'], queue_name_max: 78, empty: [] })).toMatch(
      /\): rq-mgr started root=\/srv\/rq queues=a,b\n$/,
    );
    expect(line({ level: 50, name: 'rq-web', msg: 'cannot listen', err: 'listen EADDRINUSE: in use', detail: { a: 1 } })).toMatch(
      /\): cannot listen err="listen EADDRINUSE: in use" detail=\{"a":1\}\n$/,
    );
    // A queue process's name already says its queue; a long value is cut on the terminal.
    expect(line({ name: 'rq-que hello', queue: 'hello', msg: 'x', long: 'y'.repeat(300) })).toMatch(/\(rq-que hello\): x long=y{119}…\n$/);
  });

  it('a stop shows its "stopping" and its last "stopped" line; the bookkeeping between stays in the JSON log, warnings show', () => {
    const pretty = prettyLine(false);
    const at = (level: number, msg: string, more: Record<string, unknown> = {}) =>
      pretty(`${JSON.stringify({ level, time: 0, pid: 1, name: 'rq-mgr', msg, ...more })}\n`);
    const shown = [
      at(30, 'queue created', { queue: 'a' }),
      at(30, 'stopping', { why: 'SIGINT' }),
      at(30, 'stopped', { worker: 'a', exit: 'exit 0' }),
      at(40, 'did not stop in time; SIGKILL', { worker: 'b' }),
      at(30, 'FINAL SHUTDOWN - EXITING'),
      at(30, 'stopped'),
    ].filter((l) => l !== '');
    expect(shown.map((l) => l.replace(/^\[[^\]]+\] /, '').trim())).toEqual([
      'INFO (rq-mgr): queue created queue=a',
      'INFO (rq-mgr): stopping why=SIGINT',
      'WARN (rq-mgr): did not stop in time; SIGKILL worker=b',
      'INFO (rq-mgr): stopped',
    ]);
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
  await waitFor(
    async () => (await fsp.readdir(done, { recursive: true }).catch(() => [])).some((e) => String(e).endsWith('stdio.log')),
    'the cleaner timer message to run',
    30_000,
  );
  return () => out;
}

describe('a fresh start', () => {
  it('in a terminal: a few pretty lines, none at warn or above', async () => {
    root = await freshRoot();
    const out = await startAndSettle(['script', '-qfec', `${process.execPath} ${path.join(PROJECT, 'bin', 'rq-start')} --root ${root}`, '/dev/null']);
    const lines = out()
      .replace(ANSI, '')
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '');
    expect(
      lines.some((l) => l.startsWith('{')),
      lines.join('\n'),
    ).toBe(false);
    expect(
      lines.filter((l) => /\b(WARN|ERROR|FATAL)\b/.test(l)),
      lines.join('\n'),
    ).toEqual([]);
    expect(lines.length, lines.join('\n')).toBeLessThan(10);
    expect(lines[0]).toMatch(/^rq: root .*; starting \(Ctrl-C stops\)$/);
    expect(lines.find((l) => l.includes('rq-mgr started'))).toMatch(
      /^\[\d\d:\d\d:\d\d\] INFO \(rq-mgr\): rq-mgr started root=\S+ queues=cleaner,debug,relay,rq_router,webhook web=http:\/\/127\.0\.0\.1:\d+\/$/,
    );
    expect(lines.filter((l) => l.includes('{'))).toEqual([]);
    expect(lines.at(-1)).toMatch(/^rq: ready: web UI http:\/\/127\.0\.0\.1:\d+\/$/);
    // Ctrl-C as the terminal sends it (to its foreground group): a stop in two lines.
    const before = lines.length;
    const exited = new Promise((r) => child!.once('exit', r));
    child!.stdin!.write('\x03');
    await exited;
    // The terminal echoes the ^C itself, at the start of the next line.
    const after = out()
      .replace(ANSI, '')
      .replaceAll('^C', '')
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '')
      .slice(before);
    expect(after.map((l) => l.replace(/^\[[^\]]+\] /, ''))).toEqual(['INFO (rq-mgr): stopping why=SIGINT', 'INFO (rq-mgr): stopped']);
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
