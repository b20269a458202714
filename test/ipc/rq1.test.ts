import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { mgrCommand, parseJsonArg, parseRequest, queueCommand, rq2Command } from '../../src/ipc/rq1.js';
import { listenSocket, type SocketServer } from '../../src/ipc/socket-server.js';
import { silentLogger } from '../../src/log.js';
import { tempDir } from './helpers.js';

const log = silentLogger();
let cleanup: () => Promise<void>;
let sock: string;
let server: SocketServer | undefined;

beforeEach(async () => {
  const t = await tempDir();
  cleanup = t.cleanup;
  sock = path.join(t.dir, 'queue.sock');
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanup();
});

const serve = async (proto: 'rq1' | 'rq2', handle: (p: string) => string) => {
  server = await listenSocket({ path: sock, proto, handle, log });
};

describe('parseRequest', () => {
  it('splits at the first space only', () => {
    expect(parseRequest('create_message {"a": "b c"}')).toEqual({ command: 'create_message', arg: '{"a": "b c"}' });
    expect(parseRequest('ping ')).toEqual({ command: 'ping', arg: '' });
    expect(parseRequest('ping')).toEqual({ command: 'ping', arg: '' });
    expect(parseRequest('')).toEqual({ command: '', arg: '' });
    expect(parseRequest(' x')).toEqual({ command: '', arg: 'x' });
  });
});

describe('parseJsonArg', () => {
  it('parses JSON or says why not', () => {
    expect(parseJsonArg('{"msg_id":"x"}')).toEqual({ ok: true, value: { msg_id: 'x' } });
    expect(parseJsonArg('null')).toEqual({ ok: true, value: null });
    const bad = parseJsonArg('{not json');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/JSON/);
  });
});

describe('queueCommand / mgrCommand', () => {
  it('sends `command JSON` and parses the reply', async () => {
    await serve('rq1', (p) => JSON.stringify(['ok', p]));
    expect(await queueCommand(sock, 'get_message', { msg_id: 'ü' })).toEqual(['ok', 'get_message {"msg_id":"ü"}']);
    expect(await queueCommand(sock, 'num_messages')).toEqual(['ok', 'num_messages {}']);
  });

  it('sends raw supervisor arguments, with the classic trailing space', async () => {
    await serve('rq1', (p) => JSON.stringify([p]));
    expect(await mgrCommand(sock, 'ping')).toEqual(['ping ']);
    expect(await mgrCommand(sock, 'up_queue', 'cleaner')).toEqual(['up_queue cleaner']);
  });

  it('rejects a reply that is not JSON with RQ_ERR_PROTOCOL', async () => {
    await serve('rq1', () => '[ "ERROR" ');
    const err = await queueCommand(sock, 'bogus').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RqError);
    expect((err as RqError).code).toBe('RQ_ERR_PROTOCOL');
    expect((err as RqError).message).toContain(sock);
  });

  it('passes a missing socket on as RQ_ERR_NO_REPLY', async () => {
    const err = await queueCommand(sock, 'ping').catch((e: unknown) => e);
    expect((err as RqError).code).toBe('RQ_ERR_NO_REPLY');
  });
});

describe('rq2Command', () => {
  it('sends [command, payload] and returns the reply array', async () => {
    await serve('rq2', (p) => JSON.stringify(['ok', JSON.parse(p)]));
    expect(await rq2Command(sock, 'get_timers')).toEqual(['ok', ['get_timers', null]]);
    expect(await rq2Command(sock, 'x', { a: 1 })).toEqual(['ok', ['x', { a: 1 }]]);
  });

  it('rejects a reply that is not an array', async () => {
    await serve('rq2', () => '{"ok":true}');
    const err = await rq2Command(sock, 'get_timers').catch((e: unknown) => e);
    expect((err as RqError).code).toBe('RQ_ERR_PROTOCOL');
  });
});
