// The OpenAPI schemas change no answer: every route answers the same bytes and headers as the app with every schema taken off.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREFIX, prefixedRoot } from './openapi-harness.js';
import { type BuiltApp, appFor } from './route-table.js';
import { waitState } from './web-root.js';

const s = prefixedRoot();

describe('no route answers differently for having a schema', () => {
  let bare: BuiltApp;
  beforeAll(async () => {
    // The same app with every schema taken off as its routes are added: the app as it was before the document.
    bare = await appFor(s.w.root, (r) => {
      delete r.schema;
    });
  }, 30_000);
  afterAll(async () => {
    await bare?.close();
  });

  const host = () => `127.0.0.1:${s.w.port}`;
  const VARYING = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

  /** Status, headers and body bytes, as one comparable text. */
  function shown(status: number, headers: Record<string, unknown>, body: Buffer): string {
    const kept = Object.entries(headers)
      .filter(([k]) => !VARYING.has(k.toLowerCase()))
      .map(([k, v]) => `${k.toLowerCase()}: ${String(v)}`)
      .sort();
    // A page (the 404 of an unknown queue) shows the server's clock.
    const text = body.toString('latin1').replace(/<time id="server-time"[^<]*<\/time>/, '<time id="server-time">(now)</time>');
    return [String(status), ...kept, '', text].join('\n');
  }

  async function viaServer(method: string, p: string, body?: { type: string; data: string }): Promise<string> {
    const res = await fetch(s.w.base + p, { method, headers: body ? { 'content-type': body.type } : {}, body: body?.data, redirect: 'manual' });
    return shown(res.status, Object.fromEntries(res.headers), Buffer.from(await res.arrayBuffer()));
  }

  async function viaBare(method: string, p: string, body?: { type: string; data: string }): Promise<string> {
    const res: LightMyRequestResponse = await bare.app.inject({
      method: method as 'GET',
      url: PREFIX + p,
      headers: { host: host(), ...(body ? { 'content-type': body.type } : {}) },
      payload: body?.data,
    });
    return shown(res.statusCode, res.headers, res.rawPayload);
  }

  const form = (fields: Record<string, string>) => ({ type: 'application/x-www-form-urlencoded', data: new URLSearchParams(fields).toString() });

  it.each<[string, string, { type: string; data: string }?]>([
    ['GET', '/q.json'],
    ['GET', '/q/nope.json'],
    ['GET', '/q/test/{done}.json'],
    ['GET', '/q/test/{done}/state.json'],
    ['GET', '/q/test/{done}/history.json'],
    ['GET', '/q/test/done.json?limit=1'],
    ['GET', '/q/test/done.json?limit=x'],
    ['GET', '/q/test/waiting.json?reason=soon'],
    ['GET', '/q/test/waiting.json?limit=many'],
    ['GET', '/q/test/tags.json'],
    ['GET', '/q/test/tags/a%20b.json'],
    ['GET', '/tags/a.json?limit=0'],
    ['GET', '/limits.json?key='],
    ['GET', '/q/test/config.json'],
    ['POST', '/q/test/new_message', form({ mesg: '{"dest":' })],
    ['POST', '/q/test/new_message', form({ mesg: '{"dest":"test","_method":"later"}' })],
    ['POST', '/q/test/new_message', { type: 'application/json', data: '{"mesg":{"dest":"test","max_count":"x"}}' }],
    ['POST', '/q/test/{done}/undepend', form({ x_format: 'json' })],
    ['POST', '/q/test/{done}/tags', form({ x_format: 'json', add: 'a b' })],
    ['POST', '/q/test/{done}/priority', form({ x_format: 'json', priority: '1' })],
    ['POST', '/q/test/{done}', form({ x_format: 'json', _method: 'later' })],
  ])('%s %s', async (method, p, body) => {
    const url = p.replace('{done}', s.done);
    expect(await viaServer(method, url, body)).toBe(await viaBare(method, url, body));
  });

  it('a JSON create answers its full id, and the message keeps every field it was given', async () => {
    const fields = { dest: 'test', param1: 'done', param2: 'two', src: 'openapi test', tags: ['x', 'y'], priority: 5, max_retries: 2 };
    const body = { type: 'application/x-www-form-urlencoded', data: new URLSearchParams({ mesg: JSON.stringify(fields) }).toString() };
    const answers = [await viaServer('POST', '/q/test/new_message', body), await viaBare('POST', '/q/test/new_message', body)];
    const ids = answers.map((answer) => {
      const m = /^\["ok","http:\/\/127\.0\.0\.1:\d+\/rq\/q\/test\/([\d.]+)"\]$/.exec(answer.split('\n').pop()!);
      expect(m, answer).not.toBeNull();
      return m![1];
    });
    // Apart from the id (and so perhaps the length), the two creates answered the same bytes and headers.
    const sameBut = (answer: string, id: string) => answer.replace(id, 'ID').replace(/^content-length: \d+$/m, 'content-length: N');
    expect(sameBut(answers[0], ids[0])).toBe(sameBut(answers[1], ids[1]));
    for (const id of ids) {
      await waitState(s.w.base, 'test', id, ['done']);
      const msg = (await (await fetch(`${s.w.base}/q/test/${id}.json`)).json()) as Record<string, unknown>;
      expect(msg).toMatchObject({ ...fields, msg_id: id, state: 'done' });
      expect(await viaServer('GET', `/q/test/${id}.json`)).toBe(await viaBare('GET', `/q/test/${id}.json`));
    }
  });
});
