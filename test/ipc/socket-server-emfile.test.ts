// The socket server in a process out of file descriptors: clients are turned away, never left hanging, and it answers again once fds are free.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { request } from '../../src/ipc/socket-client.js';
import { PROJECT, waitFor } from '../helpers/rq-root.js';
import { hasPrlimit } from '../helpers/prlimit.js';

// Listens, then opens /dev/null until EMFILE and says `full`; a line on stdin frees them and it says `freed`.
const SERVER = `
import fs from 'node:fs';
import { listenSocket } from ${JSON.stringify(path.join(PROJECT, 'dist', 'ipc', 'socket-server.js'))};
import { createLogger } from ${JSON.stringify(path.join(PROJECT, 'dist', 'log.js'))};
const log = createLogger({ name: 'emfile-test', level: 'debug' });
await listenSocket({ path: process.argv[1], proto: 'rq1', handle: () => JSON.stringify(['pong']), log });
const held = [];
try { for (;;) held.push(fs.openSync('/dev/null', 'r')); } catch {}
process.stdout.write('full\\n');
process.stdin.once('data', () => { for (const fd of held) fs.closeSync(fd); process.stdout.write('freed\\n'); });
`;

let child: ChildProcess | null = null;
let dir = '';
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  }
  child = null;
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe.runIf(hasPrlimit())('socket server out of fds', () => {
  it('turns clients away while every fd is taken and answers again when some are free', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-emfile-'));
    const sock = path.join(dir, 's.sock');
    child = spawn('prlimit', ['--nofile=64:64', '--', process.execPath, '--input-type=module', '-e', SERVER, sock], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    await waitFor(() => out.includes('full\n'), 'the server to take every fd');
    for (let i = 0; i < 3; i++) await expect(request(sock, 'rq1', 'ping {}', { timeoutMs: 5000 })).rejects.toThrow(/no reply|EPIPE|ECONNRESET|closed/);
    child.stdin!.write('go\n');
    await waitFor(() => out.includes('freed\n'), 'the fds freed');
    expect(await request(sock, 'rq1', 'ping {}', { timeoutMs: 5000 })).toBe('["pong"]');
    // libuv's reserve fd lets it accept and close the waiting clients itself: no error reaches the server, nothing to log.
    expect(err).not.toContain('socket server error');
  }, 30_000);
});
