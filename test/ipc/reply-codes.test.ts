// Catalogue codes on the wire, against a real queue process: rq's clients that ask get each refusal's code; a classic client gets the classic pair byte for byte.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueClient } from '../../src/ipc/queue-client.js';
import { CODES_HELLO } from '../../src/ipc/reply-codes.js';
import { SocketConnection, request } from '../../src/ipc/socket-client.js';
import { QueueProc, type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc;
beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'codes');
  q = await QueueProc.start(t.root, 'codes');
});
afterAll(async () => {
  await q?.stop();
  await t?.cleanup();
});

const UNKNOWN = 'get_message {"msg_id":"20261121.1643.46.613.2164022"}';

describe('reply codes', () => {
  it('a classic client, who never asks, gets the classic bytes; after the hello the same refusal carries its code', async () => {
    expect(await request(q.paths.sock, 'rq1', UNKNOWN)).toBe('["fail","msg not found"]');
    expect(await request(q.paths.sock, 'rq1', UNKNOWN, { hello: CODES_HELLO })).toBe('["fail","msg not found","RQ_ERR_NO_SUCH_MSG"]');
    // Asking is per connection: the next classic connection is classic again.
    expect(await request(q.paths.sock, 'rq1', UNKNOWN)).toBe('["fail","msg not found"]');
  });

  it('a refusal whose text names no catalogue template still arrives typed, and raw stays the classic pair', async () => {
    // RQ_ERR_USAGE's template is the bare text: matching the text could not tell it.
    const both = 'requeue_message {"msg_id":"20261121.1643.46.613.2164022","due":1,"delay":1}';
    expect(JSON.parse(await request(q.paths.sock, 'rq1', both, { hello: CODES_HELLO }))).toEqual(['fail', 'give due or delay, not both', 'RQ_ERR_USAGE']);
    const client = QueueClient.oneShot(q.paths.sock);
    expect(await client.act('run_message', 'not-an-id')).toMatchObject({
      ok: false,
      code: 'RQ_ERR_INVALID_FIELD',
      raw: ['fail', expect.stringMatching(/^msg_id: expected/)],
    });
    const missing = await client.act('delete_message', '20261121.1643.46.613.2164022');
    expect(missing).toEqual({ ok: false, code: 'RQ_ERR_NO_SUCH_MSG', text: 'msg not found', raw: ['fail', 'msg not found'] });
  });

  it('a batch refused for one message names it after the code (index, its own refusal and code); an unknown command is coded too', async () => {
    const batch = `create_messages ${JSON.stringify({
      messages: [
        { dest: 'codes', param1: 'a' },
        { dest: 'codes', priority: 'high' },
      ],
    })}`;
    const classic = JSON.parse(await request(q.paths.sock, 'rq1', batch)) as unknown[];
    expect(classic).toEqual(['fail', expect.stringMatching(/^messages\[1\]: priority: /)]);
    const coded = JSON.parse(await request(q.paths.sock, 'rq1', batch, { hello: CODES_HELLO })) as unknown[];
    const reason = (classic[1] as string).slice('messages[1]: '.length);
    expect(coded).toEqual([...classic, 'RQ_ERR_BATCH_MESSAGE', { index: 1, reason, code: 'RQ_ERR_INVALID_FIELD' }]);
    expect(await request(q.paths.sock, 'rq1', 'frobnicate {}')).toBe('["ERROR","unknown command: frobnicate"]');
    expect(await request(q.paths.sock, 'rq1', 'frobnicate {}', { hello: CODES_HELLO })).toBe(
      '["ERROR","unknown command: frobnicate","RQ_ERR_UNKNOWN_COMMAND"]',
    );
  });

  it('a kept connection asks once, at connect, and every refusal on it carries its code; DOWN and bad JSON too', async () => {
    const conn = await SocketConnection.open(q.paths.sock, 'rq1', { hello: CODES_HELLO });
    try {
      expect(JSON.parse(await conn.request(UNKNOWN))).toEqual(['fail', 'msg not found', 'RQ_ERR_NO_SUCH_MSG']);
      expect(JSON.parse(await conn.request('get_message {nope'))[2]).toBe('RQ_ERR_INVALID_JSON');
      expect(JSON.parse(await conn.request('ping'))).toEqual(['pong']);
    } finally {
      conn.close();
    }
  });
});
