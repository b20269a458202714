// The web's graceful stop against a real rq-mgr: a create in flight at TERM gets its reply and its message; streams end at once, idle connections go.
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseReader } from '../helpers/sse-reader.js';
import { waitFor } from '../helpers/rq-root.js';
import { type WebRoot, startWebRoot } from './web-root.js';

let w: WebRoot;

beforeAll(async () => {
  w = await startWebRoot({ queues: { test: {} } });
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

async function webPid(): Promise<number> {
  const pid = (await w.mgr.cmd('status'))[1]['[web]'].pid as number;
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`no web pid: ${pid}`);
  return pid;
}

/** Lines of rq-mgr's log (the web writes its own there too) from `from` bytes on. */
async function logSince(from: number): Promise<string> {
  return (await fs.readFile(path.join(w.root, 'log', 'mgr-test.log'), 'utf8')).slice(from);
}

describe('graceful web shutdown', () => {
  it('answers a create in flight at TERM, and its message exists; streams end and idle connections close at once', async () => {
    const logStart = (await fs.stat(path.join(w.root, 'log', 'mgr-test.log'))).size;
    const pid = await webPid();
    const events = await SseReader.open(`${w.base}/events?queue=test`);
    await events.until('ready');
    // An idle keep-alive connection, after one answered request.
    const idle = net.connect(w.port, '127.0.0.1');
    let idleOut = '';
    idle.on('data', (d) => (idleOut += d));
    const idleClosed = new Promise((r) => idle.once('close', r));
    idle.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await waitFor(() => idleOut.includes('"status":"ok"'), 'the keep-alive request to be answered');

    // The create's headers are in (the 100 Continue says so), its body not yet: it is in flight.
    const body = `mesg=${encodeURIComponent(JSON.stringify({ dest: 'test', param1: 'in-flight' }))}&x_format=json`;
    const post = net.connect(w.port, '127.0.0.1');
    let out = '';
    post.on('data', (d) => (out += d));
    const postEnded = new Promise((r) => post.once('close', r));
    post.write(
      `POST /q/test/new_message HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await waitFor(() => out.includes('100 Continue'), 'the web to take the headers');

    process.kill(pid, 'SIGTERM');
    await waitFor(async () => (await logSince(logStart)).includes('"msg":"stopping"'), 'the web to start stopping');
    // The stream is ended and the idle connection closed while the create is still waiting for its body.
    const end = await events.until('end');
    expect(JSON.parse(end.data)).toEqual({ reason: 'the web process is stopping' });
    await idleClosed;
    expect(await logSince(logStart)).not.toMatch(/"name":"rq-web".*"msg":"stopped"/);

    post.write(body);
    await postEnded;
    expect(out).toMatch(/HTTP\/1\.1 200 OK/);
    expect(out).toMatch(/\r\nconnection: close\r\n/i);
    const id = /\["ok","[^"]*\/([0-9.]+)"\]/.exec(out)?.[1];
    expect(id, out).toBeDefined();
    expect((await w.mgr.q('test', 'get_message_status', { msg_id: id }))[0]).toBe('ok');
    await waitFor(async () => (await logSince(logStart)).match(/"name":"rq-web".*"msg":"stopped"/), 'the web to stop');
  });
});
