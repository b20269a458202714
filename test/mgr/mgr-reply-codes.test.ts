// rq-mgr's socket and catalogue codes: a classic client (no hello) gets its refusals byte for byte as the classic pair; rq's MgrClient gets each one's code.
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rootPaths } from '../../src/config/paths.js';
import { encodeFrame } from '../../src/ipc/framing.js';
import { MgrClient } from '../../src/ipc/mgr-client.js';
import { CODES_HELLO } from '../../src/ipc/reply-codes.js';
import { type SocketServer, listenSocket } from '../../src/ipc/socket-server.js';
import { silentLogger } from '../../src/log.js';
import { LimitsService } from '../../src/mgr/limits-service.js';
import { handleMgrRequest, mgrCommands } from '../../src/mgr/mgr-commands.js';
import { Supervisor } from '../../src/mgr/supervisor.js';
import { type TestRoot, makeRoot } from '../helpers/rq-root.js';

let t: TestRoot;
let sock: string;
let server: SocketServer;
let limits: LimitsService;

beforeAll(async () => {
  t = await makeRoot();
  sock = rootPaths(t.root).mgrSock;
  const log = silentLogger();
  // The supervisor is not started: every request here is refused before a queue process would be.
  const sup = new Supervisor({ root: t.root, log, env: {} });
  limits = new LimitsService({ root: t.root, log });
  const handlers = mgrCommands('test', limits.commands());
  server = await listenSocket({ path: sock, proto: 'rq1', log, handle: (p, conn) => handleMgrRequest(sup, handlers, p, log, conn) });
});
afterAll(async () => {
  await server?.close();
  limits?.close();
  await t?.cleanup();
});

/** One raw connection: `requests` framed and sent at once, then every byte read until the replies to all of them are in. */
function wire(requests: string[], expectedBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const s = net.createConnection(sock);
    s.on('data', (d) => {
      chunks.push(d);
      got += d.length;
      if (got >= expectedBytes) {
        s.destroy();
        resolve(Buffer.concat(chunks));
      }
    });
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(chunks)));
    s.write(Buffer.concat(requests.map((r) => encodeFrame('rq1', r))));
  });
}

const NO_FLEET = 'no fleet is configured on this host (config/config.json has no "fleet"; docs/fleet.md)';
const NO_CONCURRENCY = 'limit: key "lonely" has no concurrency: add it to config/limits.json or send limit_concurrency';
/** Requests rq-mgr refuses, each with the classic reply a classic client must read and the code rq's clients get. */
const REFUSED: [request: string, classic: unknown[], code: string][] = [
  ['up_queue nosuch', ['fail', 'invalid queue name'], 'RQ_ERR_MGR_INVALID_QUEUE'],
  ['pause_queue ../x', ['fail', 'invalid queue name'], 'RQ_ERR_MGR_INVALID_QUEUE'],
  ['restart_queue nosuch', ['fail', 'invalid queue name'], 'RQ_ERR_MGR_INVALID_QUEUE'],
  ['delete_queue nosuch', ['fail', 'no such queue'], 'RQ_ERR_MGR_NO_SUCH_QUEUE'],
  ['create_queue {"name":"bad/name"}', ['fail', 'queue name has invalid characters'], 'RQ_ERR_QUEUE_NAME_CHARS'],
  [
    'create_queue_link /nonexistent/q.json',
    ['fail', "could not read queue config [ /nonexistent/q.json ]: ENOENT: no such file or directory, realpath '/nonexistent/q.json'"],
    'RQ_ERR_QUEUE_CONFIG_UNREADABLE',
  ],
  ['frobnicate now', ['error', 'unknown command: frobnicate'], 'RQ_ERR_UNKNOWN_COMMAND'],
  ['limit_define {"key":"lonely"}', ['fail', NO_CONCURRENCY], 'RQ_ERR_LIMIT_NO_CONCURRENCY'],
  ['limit_define [1]', ['fail', 'argument: expected a JSON object, received [1]'], 'RQ_ERR_INVALID_FIELD'],
  ['fleet_credential', ['fail', NO_FLEET], 'RQ_ERR_NO_FLEET'],
  ['fleet_forget old-host', ['fail', NO_FLEET], 'RQ_ERR_NO_FLEET'],
];

describe("rq-mgr's refusals on the wire", () => {
  it('a classic client, who never sends the hello, reads exactly the classic bytes of each refusal', async () => {
    const expected = Buffer.concat(REFUSED.map(([, classic]) => encodeFrame('rq1', JSON.stringify(classic))));
    const got = await wire(
      REFUSED.map(([request]) => request),
      expected.length,
    );
    expect(got.toString('latin1')).toBe(expected.toString('latin1'));
    expect(got.equals(expected)).toBe(true);
  });

  it('after the hello, the same connection gets each refusal with its catalogue code; the next classic connection is classic again', async () => {
    const hello = encodeFrame('rq1', JSON.stringify(['ok', 'codes']));
    const coded = Buffer.concat([hello, ...REFUSED.map(([, classic, code]) => encodeFrame('rq1', JSON.stringify([...classic, code])))]);
    const got = await wire([CODES_HELLO, ...REFUSED.map(([request]) => request)], coded.length);
    expect(got.toString('utf8')).toBe(coded.toString('utf8'));
    const again = encodeFrame('rq1', JSON.stringify(REFUSED[0][1]));
    expect((await wire([REFUSED[0][0]], again.length)).equals(again)).toBe(true);
  });

  it("a limit_reset's refused acquire carries its code inside the ok reply only for a client that asked", async () => {
    const holder = 'qr/20261121.1643.46.613.7';
    const reset = `limit_reset ${JSON.stringify({ queue: 'qr', acquire: [{ key: 'lonely', holder, since: 1 }] })}`;
    const classic = JSON.stringify(['ok', { freed: 0, results: { [holder]: ['fail', NO_CONCURRENCY] } }]);
    expect((await wire([reset], encodeFrame('rq1', classic).length)).toString('utf8')).toBe(encodeFrame('rq1', classic).toString('utf8'));
    const coded = JSON.stringify(['ok', { freed: 0, results: { [holder]: ['fail', NO_CONCURRENCY, 'RQ_ERR_LIMIT_NO_CONCURRENCY'] } }]);
    const both = await wire([CODES_HELLO, reset], encodeFrame('rq1', '["ok","codes"]').length + encodeFrame('rq1', coded).length);
    expect(both.toString('utf8')).toBe(encodeFrame('rq1', '["ok","codes"]').toString('utf8') + encodeFrame('rq1', coded).toString('utf8'));
  });
});

describe('MgrClient reads the code sent with each refusal', () => {
  const client = () => new MgrClient(sock, 5000);

  it('administering, restarting and deleting an unknown queue', async () => {
    expect(await client().admin('down', 'nosuch')).toEqual({
      ok: false,
      code: 'RQ_ERR_MGR_INVALID_QUEUE',
      text: 'invalid queue name',
      raw: ['fail', 'invalid queue name'],
    });
    expect(await client().restart('nosuch')).toMatchObject({ ok: false, code: 'RQ_ERR_MGR_INVALID_QUEUE' });
    expect(await client().deleteQueue('nosuch')).toMatchObject({ ok: false, code: 'RQ_ERR_MGR_NO_SUCH_QUEUE', text: 'no such queue' });
  });

  it('a queue creation refused: its code, and raw the classic pair the web quotes', async () => {
    expect(await client().createQueue('{"name":"bad/name"}')).toEqual({
      ok: false,
      code: 'RQ_ERR_QUEUE_NAME_CHARS',
      text: 'queue name has invalid characters',
      raw: ['fail', 'queue name has invalid characters'],
    });
    expect(await client().createQueue('{nope')).toMatchObject({
      ok: false,
      code: 'RQ_ERR_QUEUE_CONFIG_REFUSED',
      text: expect.stringMatching(/^queue not created: invalid JSON: /),
    });
    const missing = path.join(t.root, 'none.json');
    expect(await client().createQueueLink(missing)).toMatchObject({ ok: false, code: 'RQ_ERR_QUEUE_CONFIG_UNREADABLE' });
  });

  it('the limit commands: define, acquire and a reset whose acquire is refused', async () => {
    expect(await client().limitDefine('lonely')).toMatchObject({ ok: false, code: 'RQ_ERR_LIMIT_NO_CONCURRENCY', text: NO_CONCURRENCY });
    expect(await client().limitAcquire({ key: 'lonely', holder: 'qa/20261121.1643.46.613.1', since: 1 })).toEqual({
      refused: NO_CONCURRENCY,
      code: 'RQ_ERR_LIMIT_NO_CONCURRENCY',
    });
    const holder = 'qb/20261121.1643.46.613.2';
    const reset = await client().limitReset('qb', [{ key: 'lonely', holder, since: 2 }]);
    expect(reset).toMatchObject({ ok: true, value: { results: { [holder]: { refused: NO_CONCURRENCY, code: 'RQ_ERR_LIMIT_NO_CONCURRENCY' } } } });
    expect(await client().limitStatus('')).toMatchObject({ ok: false, code: 'RQ_ERR_INVALID_FIELD' });
  });
});
