// W3C trace context end to end on a real root: HTTP headers and fields, the CLI's flags and environment, reach a bash and a Python script's TRACEPARENT and TRACESTATE unchanged; refusals create nothing.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACEPARENT_EXPECTED } from '../../../src/message/trace-context.js';
import { expectOneLineError, runRq } from '../../helpers/rq-cli.js';
import { VERBS_PY, VERBS_SH, waitFor } from '../../helpers/rq-root.js';
import { type WebRoot, startWebRoot } from '../../web/web-root.js';

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TS = 'congo=t61rcWkgMzE, rojo=00f067aa0ba902b7';
const OTHER_TP = '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
/** The trace rq-mgr (and so every queue daemon) was started inside: no run may inherit it. */
const DAEMON_TP = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;

let w: WebRoot;

beforeAll(async () => {
  w = await startWebRoot({
    queues: { sh: { script: VERBS_SH }, py: { script: VERBS_PY } },
    env: { TRACEPARENT: DAEMON_TP, TRACESTATE: 'daemon=1' },
  });
  await Promise.all(['sh', 'py'].map((q) => w.mgr.waitQueueUp(q)));
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const getMessage = async (queue: string, id: string): Promise<any> => (await w.mgr.q(queue, 'get_message', { msg_id: id }))[1];

/** Waits for the message to finish and returns it with the TRACEPARENT= and TRACESTATE= lines its script printed (the `env` verb prints its environment). */
async function finished(queue: string, id: string) {
  await waitFor(async () => ['done', 'err'].includes((await w.mgr.q(queue, 'get_message_state', { msg_id: id }))[1]), `${queue}/${id} to finish`);
  const msg = await getMessage(queue, id);
  const log = await fs.readFile(path.join(w.root, msg.path, 'job', 'stdio.log'), 'utf8');
  return { msg, env: log.split('\n').filter((l) => /^TRACE(PARENT|STATE)=/.test(l)) };
}

const idOf = (full: string) => full.trim().split('/').pop()!;

/** POST new_message with the fields as a JSON body; the parsed answer. */
async function post(queue: string, fields: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(`${w.base}/q/${queue}/new_message`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ dest: queue, ...fields }),
  });
  return { status: res.status, body: (await res.json()) as [string, string] };
}

const total = async (queue: string): Promise<number> =>
  Object.values((await w.mgr.q(queue, 'num_messages')) as Record<string, unknown>).reduce<number>((n, v) => n + (typeof v === 'number' ? v : 0), 0);

const rq = (args: string[], env: NodeJS.ProcessEnv = {}) => runRq(args, { root: w.root, env: { TRACEPARENT: '', TRACESTATE: '', ...env } });

describe('an HTTP create', () => {
  it.each(['sh', 'py'])('its traceparent and tracestate headers reach the %s script unchanged, and stay with the message', async (queue) => {
    const r = await post(queue, { param1: 'env' }, { traceparent: TP, tracestate: TS });
    expect(r.body[0]).toBe('ok');
    const { msg, env } = await finished(queue, idOf(r.body[1]));
    expect(msg).toMatchObject({ state: 'done', traceparent: TP, tracestate: TS });
    expect(env).toEqual([`TRACEPARENT=${TP}`, `TRACESTATE=${TS}`]);
  });

  it("a body's own trace context wins whole over the headers, and a message without one gets none of the daemon's", async () => {
    const own = await post('sh', { param1: 'env', traceparent: OTHER_TP }, { traceparent: TP, tracestate: TS });
    expect((await finished('sh', idOf(own.body[1]))).env).toEqual([`TRACEPARENT=${OTHER_TP}`]);
    const none = await post('py', { param1: 'env' }, { tracestate: TS });
    const { msg, env } = await finished('py', idOf(none.body[1]));
    expect(env).toEqual([]);
    expect(msg).not.toHaveProperty('traceparent');
    expect(msg).not.toHaveProperty('tracestate');
  });

  it('new_messages gives the headers to each message without its own', async () => {
    const res = await fetch(`${w.base}/q/sh/new_messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: TP },
      body: JSON.stringify([{ param1: 'env' }, { param1: 'env', traceparent: OTHER_TP, tracestate: 'x=1' }]),
    });
    const [ok, replies] = (await res.json()) as [string, [string, string][]];
    expect(ok).toBe('ok');
    expect((await finished('sh', idOf(replies[0][1]))).env).toEqual([`TRACEPARENT=${TP}`]);
    expect((await finished('sh', idOf(replies[1][1]))).env).toEqual([`TRACEPARENT=${OTHER_TP}`, 'TRACESTATE=x=1']);
  });

  it('a bad header or field is a 400 in JSON naming it, and nothing is created', async () => {
    const before = await total('sh');
    const zeros = `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`;
    expect(await post('sh', { param1: 'env' }, { traceparent: zeros })).toEqual({
      status: 400,
      body: ['fail', `traceparent header: expected ${TRACEPARENT_EXPECTED} (this one: its trace id is all zeros), received "${zeros}"`],
    });
    const badState = await post('sh', { param1: 'env', traceparent: TP, tracestate: 'Upper=1' });
    expect(badState.status).toBe(400);
    expect(badState.body[1]).toMatch(/^tracestate: expected a W3C tracestate: .*member 1 "Upper=1".*, received "Upper=1"$/);
    const batch = await fetch(`${w.base}/q/sh/new_messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ param1: 'env' }, { param1: 'env', traceparent: TP.toUpperCase() }]),
    });
    expect(batch.status).toBe(400);
    expect(((await batch.json()) as string[])[1]).toMatch(/^messages\[1\]: traceparent: expected .*its hex is uppercase/);
    expect(await total('sh')).toBe(before);
  });
});

describe('a copy', () => {
  it('a clone keeps the trace context, and its run continues the trace', async () => {
    const r = await post('py', { param1: 'env' }, { traceparent: TP, tracestate: TS });
    await finished('py', idOf(r.body[1]));
    const [ok, full] = await w.mgr.q('py', 'clone_message', { msg_id: idOf(r.body[1]) });
    expect(ok).toBe('ok');
    const { msg, env } = await finished('py', idOf(full));
    expect(msg).toMatchObject({ traceparent: TP, tracestate: TS });
    expect(env).toEqual([`TRACEPARENT=${TP}`, `TRACESTATE=${TS}`]);
  });
});

describe('a CLI create', () => {
  it.each(['sh', 'py'])('--traceparent and --tracestate reach the %s script unchanged, the environment left aside', async (queue) => {
    const r = await rq(['sendmesg', '--dest', queue, '--param1', 'env', '--traceparent', TP, '--tracestate', TS], {
      TRACEPARENT: OTHER_TP,
      TRACESTATE: 'env=1',
    });
    expect(r.code, r.err.join('\n')).toBe(0);
    expect((await finished(queue, idOf(r.out[0]))).env).toEqual([`TRACEPARENT=${TP}`, `TRACESTATE=${TS}`]);
  });

  it("without --traceparent, a job's rq sendmesg continues the job's trace: HTTP header → bash job → its follow-up's Python script", async () => {
    const r = await post('sh', { param1: 'follow_up', param2: 'py' }, { traceparent: TP, tracestate: TS });
    const { msg } = await finished('sh', idOf(r.body[1]));
    expect(msg.state, msg.status).toBe('done');
    const followUp = /\/q\/py\/(\S+)/.exec(msg.status)![1];
    expect((await finished('py', followUp)).env).toEqual([`TRACEPARENT=${TP}`, `TRACESTATE=${TS}`]);
  });

  it('a bad --traceparent exits non-zero naming the flag, and nothing is created', async () => {
    const before = await total('sh');
    const r = await rq(['sendmesg', '--dest', 'sh', '--param1', 'env', '--traceparent', 'abc']);
    expectOneLineError(r, `--traceparent: expected ${TRACEPARENT_EXPECTED} (this one: 3 characters, not 55), received "abc"`, 2);
    const lone = await rq(['sendmesg', '--dest', 'sh', '--param1', 'env', '--tracestate', 'a=1'], { TRACEPARENT: TP });
    expectOneLineError(lone, /^rq: --tracestate: expected a traceparent with it/, 2);
    expect(await total('sh')).toBe(before);
  });

  it('a TRACEPARENT of its environment that is no W3C one is left out with a warning; the message is sent', async () => {
    const r = await rq(['sendmesg', '--dest', 'py', '--param1', 'env'], { TRACEPARENT: 'garbage', TRACESTATE: 'a=1' });
    expect(r.code).toBe(0);
    expect(r.err).toEqual([`rq: TRACEPARENT: expected ${TRACEPARENT_EXPECTED} (this one: 7 characters, not 55), received "garbage"; sent without it`]);
    expect((await finished('py', idOf(r.out[0]))).env).toEqual([]);
  });
});
