// The one-shot socket client (request): replies, and what each way of getting none says; mayHaveArrived on its errors.
import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { mayHaveArrived, request } from '../../src/ipc/socket-client.js';
import { PROJECT } from '../helpers/rq-root.js';
import { isRoot } from '../helpers/temp-spool.js';
import { OVER_A_SOCKET_BUFFER, holdLoop, noReplyFrom, resetAfterFirstChunk, socketPlace, staleSocket } from './helpers.js';

const place = socketPlace('q.sock');

/** What a request to `sockPath` from user nobody fails with (root is never refused by permissions). */
function requestAsNobody(sockPath: string): Promise<string> {
  const client = path.join(PROJECT, 'dist', 'ipc', 'socket-client.js');
  const script = `import(${JSON.stringify(client)}).then((m) => m.request(${JSON.stringify(sockPath)}, 'rq1', 'ping ')).then((r) => console.log('reply', r), (e) => console.log(e.message))`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', script], { uid: 65534, gid: 65534 }, (err, stdout) => (err ? reject(err) : resolve(stdout.trim())));
  });
}

describe('request', () => {
  it('sends one frame and returns the one reply', async () => {
    await place.serve((p) => `re ${p}`);
    expect(await request(place.sock, 'rq1', 'ping ')).toBe('re ping ');
  });

  it('names the path and says there is no socket file (ENOENT); the request never left', async () => {
    const err = await noReplyFrom(request(place.sock, 'rq1', 'ping '), place.sock);
    expect(err.message).toBe(`no reply from ${place.sock}: ENOENT: no socket file (is the process running?)`);
    expect(mayHaveArrived(err)).toBe(false);
  });

  it('names the path and says nothing is listening (ECONNREFUSED)', async () => {
    await staleSocket(place.sock);
    const err = await noReplyFrom(request(place.sock, 'rq1', 'ping '), place.sock);
    expect(err.message).toBe(`no reply from ${place.sock}: ECONNREFUSED: nothing is listening (the process may have died)`);
  });

  it('says the socket is private to its owner when another user is refused (EACCES)', async () => {
    await place.serve(() => 'never');
    if (isRoot()) {
      // The socket is 0600 in a directory others may enter.
      await fsp.chmod(place.dir, 0o755);
      expect(await requestAsNobody(place.sock)).toBe(`no reply from ${place.sock}: EACCES: permission denied (the socket is private to its owner)`);
    } else {
      await fsp.chmod(place.sock, 0o000);
      const err = await noReplyFrom(request(place.sock, 'rq1', 'ping '), place.sock);
      expect(err.message).toBe(`no reply from ${place.sock}: EACCES: permission denied (the socket is private to its owner)`);
    }
  });

  it('times out when no reply comes; the request may have arrived', async () => {
    await place.rawServer(() => {});
    const t0 = Date.now();
    const err = await noReplyFrom(request(place.sock, 'rq1', 'ping ', { timeoutMs: 150 }), place.sock);
    expect(err.message).toBe(`no reply from ${place.sock}: timed out after 150 ms`);
    expect(mayHaveArrived(err)).toBe(true);
    // A timeout feature: elapsed time is what it promises (a little slack for libuv's cached clock).
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('says so when it timed out before the connection was even made; the request never left', async () => {
    await place.rawServer(() => {});
    const pending = request(place.sock, 'rq1', 'ping ', { timeoutMs: 50 });
    holdLoop(100);
    const err = await noReplyFrom(pending, place.sock);
    expect(err.message).toBe(`no reply from ${place.sock}: timed out after 50 ms connecting`);
    expect(mayHaveArrived(err)).toBe(false);
  });

  it('says the connection failed when it breaks after connecting; the request may have arrived', async () => {
    await place.rawServer(resetAfterFirstChunk);
    const err = await noReplyFrom(request(place.sock, 'rq1', OVER_A_SOCKET_BUFFER), place.sock);
    expect(err.message).toMatch(new RegExp(`^no reply from ${place.sock}: connection failed: (write EPIPE|read ECONNRESET)$`));
    expect(mayHaveArrived(err)).toBe(true);
  });

  it('rejects when the server closes before a whole reply', async () => {
    await place.rawServer((c) => c.on('data', () => c.end('rq1 00000010 short')));
    const err = await noReplyFrom(request(place.sock, 'rq1', 'ping '), place.sock);
    expect(err.message).toBe(`no reply from ${place.sock}: connection closed before a whole reply arrived`);
  });

  it('rejects a reply that is not a frame as a protocol error naming the path', async () => {
    await place.rawServer((c) => c.on('data', () => c.end('HTTP/1.1 400 Bad Request\r\n')));
    const err = await request(place.sock, 'rq1', 'ping ').catch((e: RqError) => e);
    expect(err).toBeInstanceOf(RqError);
    expect((err as RqError).code).toBe('RQ_ERR_PROTOCOL');
    expect((err as RqError).message).toMatch(new RegExp(`^bad reply from ${place.sock}: bad frame magic "HTTP"`));
  });

  it('receives a 5 MB reply whole', async () => {
    const big = 'x✓'.repeat(1_250_000); // 5 MB of UTF-8
    expect(Buffer.byteLength(big)).toBe(5_000_000);
    await place.serve(() => big);
    const got = await request(place.sock, 'rq1', 'messages {}');
    expect(got.length).toBe(big.length);
    expect(got === big).toBe(true);
  });
});

describe('mayHaveArrived', () => {
  it('is true for any error that does not say the request never left', () => {
    expect(mayHaveArrived(new Error('anything'))).toBe(true);
    expect(mayHaveArrived(RqError.of('RQ_ERR_NO_REPLY', 'x'))).toBe(true);
  });
});
