// Property: whatever arrives on a queue's rq1 socket (known commands with arguments of any shape, near
// misses of their names, garbage, deep nesting, huge strings, bytes that are not UTF-8 or not frames),
// the queue answers JSON, never changes its messages on a refusal, and keeps running in the same process.
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { FrameDecoder, encodeFrame } from '../../src/ipc/framing.js';
import { parseRequest, queueCommand } from '../../src/ipc/rq1.js';
import { request } from '../../src/ipc/socket-client.js';
import { COMMANDS } from '../../src/queue/commands/commands.js';
import { type WebRoot, send, startWebRoot, waitState } from '../web/web-root.js';
import { FUZZ_SEED, fuzzRuns, messageIds, shortReport, supervisedPids } from './fuzz-helpers.js';

let w: WebRoot;
let sock: string;

beforeAll(async () => {
  w = await startWebRoot();
  sock = queuePaths(w.root, 'test').sock;
  // A message in each finished state (clone, get and delete have something real to act on), then
  // paused so that what the fuzz creates stays in que/ and prep/ and no script runs.
  await waitState(w.base, 'test', await send(w.base, 'test', { param1: 'done' }), ['done']);
  await waitState(w.base, 'test', await send(w.base, 'test', { param1: 'err' }), ['err']);
  expect(await w.mgr.cmd('pause_queue', 'test')).toEqual(['ok', 'test']);
  for (let i = 0; i < 3; i++) await send(w.base, 'test', { param1: 'done', idempotency_key: `seed-${i}` });
  for (let i = 0; i < 2; i++) await send(w.base, 'test', { param1: 'done', _method: 'prep' });
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

/** The one request that legitimately stops the queue: `shutdown`, with any argument. */
const stops = (payload: string) => parseRequest(payload).command === 'shutdown';

const NAMES = Object.keys(COMMANDS);
/** Stands for the id of a message the queue holds when the request is made (they change as the fuzz runs). */
const EXISTING = '\u0001existing';

const text = fc.string({ unit: 'binary', maxLength: 40 });
const huge = fc.integer({ min: 0, max: 2_000_000 }).map((n) => 'x'.repeat(n));
/** Any value a field could be given: wrong types, edge texts, huge strings, nested JSON. */
const anyValue = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: text },
  { weight: 1, arbitrary: huge },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      null,
      true,
      false,
      0,
      -1,
      1.5,
      1e308,
      '',
      ' ',
      '\n',
      'test',
      'done',
      'prep',
      'que',
      'err',
      'errack',
      'done\u0000',
      '../..',
      '/etc/hostname',
      '/',
      '.',
      '/dev/null',
      'http://127.0.0.1:1/x',
    ),
  },
);
const msgId = fc.oneof(
  { weight: 3, arbitrary: fc.constant(EXISTING) },
  { weight: 2, arbitrary: fc.constantFrom('20200101.0000.00.000.1', '.20200101.0000.00.000.1', '20200101.0000.00.000.1/../x', 'constructor', '__proto__') },
  { weight: 2, arbitrary: anyValue },
);
/** Values each field takes when a client uses it as intended, so that commands reach their work. */
const shortText = fc.string({ maxLength: 12 });
const plausible = {
  dest: fc.constant('test'),
  msg_id: msgId,
  orig_msg_id: fc.constant(EXISTING),
  src: shortText,
  param1: fc.constantFrom('done', 'err', 'slow'),
  param2: shortText,
  param3: shortText,
  param4: shortText,
  count: fc.nat({ max: 20 }),
  max_count: fc.nat({ max: 20 }),
  due: fc.integer({ min: 0, max: 2_000_000_000 }),
  post_run_webhook: fc.constant(['http://127.0.0.1:1/hook']),
  force_remote: fc.boolean(),
  idempotency_key: fc.oneof(fc.constantFrom('k1', 'k2', 'seed-0', 'seed-1'), fc.uuid()),
  pathname: fc.constantFrom('/etc/hostname', '/nonexistent/file', '/'),
  name: fc.constantFrom('a.txt', '../up.txt', 'sub/dir.txt', ''),
  attachment_name: fc.constantFrom('a.txt', 'hostname', '../x'),
  state: fc.constantFrom('prep', 'que', 'run', 'done', 'relayed', 'err', 'errack'),
  limit: fc.nat({ max: 50 }),
  filter: shortText,
  timeout: fc.constantFrom(1, 2),
};
const FIELD_NAMES = Object.keys(plausible);
/** The fields the commands read, each present or not, then none, one or two of them given any value at all. */
const fields = fc
  .tuple(fc.record(plausible, { requiredKeys: ['dest'] }), fc.array(fc.tuple(fc.constantFrom(...FIELD_NAMES), anyValue), { maxLength: 2 }))
  .map(([base, corrupt]) => {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of corrupt) out[k] = v;
    return out;
  });
/** JSON no client can build (stringify recurses), only a parser meets: nesting 100,000 deep, in a field or whole. */
const deepText = fc
  .tuple(
    fc.integer({ min: 1, max: 100_000 }),
    fc.boolean(),
    fc.constantFrom('', 'dest', 'force_remote', 'param1', 'idempotency_key', 'msg_id', 'post_run_webhook'),
  )
  .map(([n, arrays, field]) => {
    const nested = arrays ? '['.repeat(n) + ']'.repeat(n) : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    return field === '' ? nested : `{"dest":"test","${field}":${nested}}`;
  });
/** Keys a plain object lookup could mistake for fields: only raw text gives them as own keys (JSON.parse does). */
const protoText = fc.constantFrom(
  '{"dest":"test","__proto__":{"dest":"x","param1":"p"}}',
  '{"__proto__":null}',
  '{"dest":"test","constructor":{"prototype":{"x":1}}}',
  '{"dest":{"toString":"x"}}',
  '{"msg_id":{"__proto__":[]}}',
);
const arg = fc.oneof(
  { weight: 6, arbitrary: fields.map((value) => ({ json: value })) },
  { weight: 2, arbitrary: anyValue.map((value) => ({ json: value })) },
  { weight: 1, arbitrary: deepText.map((raw) => ({ raw })) },
  { weight: 1, arbitrary: protoText.map((raw) => ({ raw })) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(text, fc.constantFrom('{', '{"dest":', '{"dest":"test"', 'null', '', '   ', '{}{}', '{"dest":"test"} trailing', '\u0000'))
      .map((raw) => ({ raw })),
  },
);
/** Known names, and near misses of them: suffixes, prefixes, case, prototype keys, garbage without spaces. */
const command = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...NAMES) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom('X', '_please', '\t', '\n', '\u0000', 'é', '()', '.')).map(([n, s]) => n + s) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom('x', '_', '\t', '/')).map(([n, p]) => p + n) },
  { weight: 1, arbitrary: fc.constantFrom(...NAMES).map((n) => n.toUpperCase()) },
  { weight: 1, arbitrary: fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '') },
  { weight: 1, arbitrary: text.map((s) => s.replaceAll(' ', '')) },
);
const requestArb = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.record({
      command,
      sep: fc.oneof({ weight: 8, arbitrary: fc.constant(' ') }, { weight: 1, arbitrary: fc.constantFrom('', '\t', '  ') }),
      arg,
      pick: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ whole: fc.string({ unit: 'binary', maxLength: 300 }) }) },
);
type Req = { command: string; sep: string; arg: { json: unknown } | { raw: string }; pick: number } | { whole: string };

/** The request text: the argument's EXISTING stands for a message the queue holds now. */
function payloadOf(r: Req, ids: string[]): string {
  if ('whole' in r) return r.whole;
  let argText: string;
  if ('raw' in r.arg) argText = r.arg.raw;
  else {
    const v = r.arg.json;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      if (o.msg_id === EXISTING) o.msg_id = ids.length ? ids[r.pick % ids.length] : '20200101.0000.00.000.1';
      // wait_message waits 60 s by default for a message that may never finish: answered, but past this test's patience.
      if (r.command === 'wait_message' && (o.timeout === undefined || o.timeout === null || o.timeout === '')) o.timeout = 1;
    }
    argText = JSON.stringify(v) ?? '';
  }
  return `${r.command}${r.sep}${argText}`;
}

const short = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}…(${s.length} chars)` : s);

describe('queue socket fuzz', () => {
  it('every request is answered with JSON; a refusal changes no message; the queue keeps its process', async () => {
    const pids = await supervisedPids(w.root);
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        const before = await messageIds(w.root, 'test');
        const payload = payloadOf(r as Req, before);
        if (stops(payload)) return;
        const raw = await request(sock, 'rq1', payload, { timeoutMs: 20_000 });
        let reply: unknown;
        try {
          reply = JSON.parse(raw);
        } catch {
          throw new Error(`reply to ${short(JSON.stringify(payload))} is not JSON: ${short(raw)}`);
        }
        if (!(Array.isArray(reply) && reply[0] === 'ok')) {
          expect(await messageIds(w.root, 'test'), `${short(JSON.stringify(payload))} answered ${short(raw)} and changed the messages`).toEqual(before);
        }
      }),
      { numRuns: fuzzRuns(600), seed: FUZZ_SEED, endOnFailure: true, reporter: shortReport },
    );
    expect(await queueCommand(sock, 'ping')).toEqual(['pong']);
    expect(await supervisedPids(w.root)).toEqual(pids);
  }, 600_000);

  it('bytes on the wire that are not UTF-8 or not frames get JSON replies (a protocol error at worst), and change nothing', async () => {
    const pids = await supervisedPids(w.root);
    const framed = (payload: Uint8Array) => encodeFrame('rq1', Buffer.from(payload));
    const bytes = fc.oneof(
      // Not a frame at all, or a header that lies (bad magic, letters for digits, no space, a length beyond the data).
      fc.uint8Array({ minLength: 1, maxLength: 300 }).map((b) => Buffer.from(b)),
      fc
        .tuple(fc.constantFrom('rq1 ', 'rq2 ', 'RQ1 ', 'rq1 0000001x ', 'rq1 00000010', 'rq1 99999999 ', 'rq1 00000100 '), fc.uint8Array({ maxLength: 50 }))
        .map(([h, b]) => Buffer.concat([Buffer.from(h, 'latin1'), b])),
      // Well framed, but the payload is not UTF-8: a command followed by arbitrary bytes, or bytes alone.
      fc
        .tuple(fc.constantFrom(...NAMES.filter((n) => n !== 'shutdown'), 'nope'), fc.uint8Array({ maxLength: 200 }))
        .map(([c, b]) => framed(Buffer.concat([Buffer.from(`${c} `), b]))),
      fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => framed(b)),
      // Two requests in one write, the second cut short.
      fc.tuple(fc.constantFrom('ping {}', 'num_messages {}', 'create_message {"dest":'), fc.nat({ max: 12 })).map(([p, cut]) => {
        const f = framed(Buffer.from(p));
        return Buffer.concat([f, f.subarray(0, f.length - 1 - cut)]);
      }),
    );
    await fc.assert(
      fc.asyncProperty(bytes, async (b) => {
        const before = await messageIds(w.root, 'test');
        const replies = await exchange(sock, b);
        // Every shape gets a reply, a header cut off from its payload included.
        expect(replies.length, `no reply to ${short(JSON.stringify(b.toString('latin1')))}`).toBeGreaterThan(0);
        for (const raw of replies) {
          let reply: unknown;
          try {
            reply = JSON.parse(raw);
          } catch {
            throw new Error(`reply to ${short(JSON.stringify(b.toString('latin1')))} is not JSON: ${short(raw)}`);
          }
          if (!(Array.isArray(reply) && reply[0] === 'ok')) expect(await messageIds(w.root, 'test')).toEqual(before);
        }
      }),
      { numRuns: fuzzRuns(200), seed: FUZZ_SEED, endOnFailure: true, reporter: shortReport },
    );
    expect(await queueCommand(sock, 'ping')).toEqual(['pong']);
    expect(await supervisedPids(w.root)).toEqual(pids);
  }, 600_000);

  it('names close to shutdown are unknown commands and stop nothing', async () => {
    const pids = await supervisedPids(w.root);
    for (const name of ['shutdownX', 'shutdown_please', 'SHUTDOWN', 'Shutdown', 'shutdown\t{}', 'xshutdown', 'shutdown\n']) {
      expect(stops(`${name} {}`), name).toBe(false);
      const reply = JSON.parse(await request(sock, 'rq1', `${name} {}`));
      expect(reply, name).toEqual(['ERROR', `unknown command: ${name}`]);
    }
    expect(await queueCommand(sock, 'ping')).toEqual(['pong']);
    expect(await supervisedPids(w.root)).toEqual(pids);
  });
});

/**
 * Writes raw bytes, half-closes (the server then answers what it got and closes its side), and returns
 * every reply frame; a reply that is not a frame fails the decoder, which fails the test.
 */
function exchange(path: string, bytes: Buffer): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const decoder = new FrameDecoder('rq1');
    const replies: string[] = [];
    const socket = net.createConnection(path);
    const timer = setTimeout(() => socket.destroy(new Error(`no close within 20 s after ${short(JSON.stringify(bytes.toString('latin1')))}`)), 20_000);
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const f of decoder.push(chunk)) replies.push(f.toString('utf8'));
      } catch (err) {
        socket.destroy(err as Error);
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', (hadError) => {
      clearTimeout(timer);
      if (!hadError) resolve(replies);
    });
    socket.end(bytes);
  });
}
