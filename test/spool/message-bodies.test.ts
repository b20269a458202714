// Light queued messages: body fields read back from the msg file, the object otherwise unchanged to whoever holds it.
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/message/message.js';
import { LIGHT_MIN_CHARS, MessageBodies, fingerprint, paramFingerprint } from '../../src/spool/message-bodies.js';

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bodies-'));
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

async function stored(id: string, fields: Record<string, unknown>): Promise<Message> {
  const msg = { msg_id: id, dest: 'q', orig_msg_id: `q/${id}`, count: 0, max_count: 15, due: 1, ...fields } as Message;
  await fs.mkdir(path.join(dir, id), { recursive: true });
  await fs.writeFile(path.join(dir, id, 'msg'), JSON.stringify(msg));
  return JSON.parse(JSON.stringify(msg)) as Message;
}

/** MessageBodies over `dir` counting its file reads. */
function counted(): { bodies: MessageBodies; reads: () => number } {
  let n = 0;
  const bodies = new MessageBodies({ que: dir, run: path.join(dir, 'no-run') }, (file) => {
    n++;
    return readFileSync(file, 'utf8');
  });
  return { bodies, reads: () => n };
}

describe('MessageBodies', () => {
  it('keeps a message whole below the threshold, and lightens one at it', async () => {
    const { bodies } = counted();
    const small = await stored('s1', { param1: 'x'.repeat(LIGHT_MIN_CHARS - 1) });
    expect(bodies.lighten(small)).toBe(small);
    expect(bodies.isLight(small)).toBe(false);
    expect(Object.getOwnPropertyDescriptor(small, 'param1')?.value).toBe('x'.repeat(LIGHT_MIN_CHARS - 1));
    const whole = await stored('b1', { param1: 'x'.repeat(LIGHT_MIN_CHARS - 1), src: 'y' });
    const big = bodies.lighten(whole);
    expect(bodies.isLight(big)).toBe(true);
    expect(Object.getOwnPropertyDescriptor(big, 'param1')?.value).toBeUndefined();
    expect(bodies.lighten(big)).toBe(big);
  });

  it('gives every holder the same fields, keys in the same order, through JSON, spreads and reads', async () => {
    const { bodies, reads } = counted();
    const whole = await stored('b2', { param1: 'a'.repeat(5000), param2: 'b'.repeat(257), param3: 'c'.repeat(256), src: 'cron', priority: 3 });
    const msg = bodies.lighten(JSON.parse(JSON.stringify(whole)) as Message);
    expect(JSON.stringify(msg)).toBe(JSON.stringify(whole));
    expect({ ...msg }).toEqual(whole);
    expect(Object.keys(msg)).toEqual(Object.keys(whole));
    expect(msg.param1).toBe('a'.repeat(5000));
    // One read served the whole turn: a JSON.stringify asks for each long field in a row.
    expect(reads()).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(msg.param2).toBe('b'.repeat(257));
    expect(reads()).toBe(2);
    // Up to 256 characters a body field stays in memory: reading it costs no file read.
    expect(Object.getOwnPropertyDescriptor(msg, 'param3')?.value).toBe('c'.repeat(256));
    expect(Object.getOwnPropertyDescriptor(msg, 'src')?.value).toBe('cron');
    expect(Object.getOwnPropertyDescriptor(msg, 'param2')?.get).toBeTypeOf('function');
  });

  // Which string a field holds cannot be seen from JS (deep-que.test.ts measures the memory): what can fail is a value.
  it('keeps every value when light messages share the strings of short values they repeat and of an orig_msg_id equal to the id', async () => {
    const { bodies } = counted();
    // Built by JSON.parse, as a create's are: equal values in distinct strings.
    const a = bodies.lighten(await stored('c1', { param1: 'x'.repeat(2000), status: 'queued' }));
    const b = bodies.lighten(await stored('c2', { param1: 'x'.repeat(2000), status: 'queued' }));
    expect(a.status).toBe('queued');
    expect(b.status).toBe('queued');
    const other = bodies.lighten(await stored('c3', { param1: 'y'.repeat(2000), status: 'queued-too' }));
    expect(other.status).toBe('queued-too');
    const own = bodies.lighten(await stored('c4', { orig_msg_id: 'c4', param1: 'y'.repeat(2000) }));
    const notOwn = bodies.lighten(await stored('c5', { orig_msg_id: 'c4', param1: 'y'.repeat(2000) }));
    expect(JSON.parse(JSON.stringify(own)).orig_msg_id).toBe('c4');
    expect(notOwn.orig_msg_id).toBe('c4');
    expect(notOwn.msg_id).toBe('c5');
  });

  it('takes a written field as a plain one, and hydrate restores the others from disk', async () => {
    const { bodies } = counted();
    const msg = bodies.lighten(await stored('b3', { param1: 'p'.repeat(3000), param3: 'three' }));
    msg.param3 = 'changed';
    expect(Object.getOwnPropertyDescriptor(msg, 'param3')?.value).toBe('changed');
    bodies.hydrate(msg);
    expect(bodies.isLight(msg)).toBe(false);
    expect(Object.getOwnPropertyDescriptor(msg, 'param1')?.value).toBe('p'.repeat(3000));
    expect(msg.param3).toBe('changed');
  });

  it('leaves a message it cannot read back light, so it is never run or written without its body', async () => {
    const { bodies } = counted();
    const msg = bodies.lighten(await stored('b4', { param1: 'q'.repeat(2000) }));
    await fs.rm(path.join(dir, 'b4'), { recursive: true });
    await new Promise((r) => setImmediate(r));
    expect(bodies.hydrate(msg)).toBe(false);
    expect(bodies.isLight(msg)).toBe(true);
    expect(() => msg.param1).toThrow(/reading back the params of queued message b4 failed: ENOENT/);
    expect(() => JSON.stringify(msg)).toThrow(/ENOENT/);
  });

  it('reads a light message back from run/ once the dispatcher has moved it there', async () => {
    const { bodies } = counted();
    const msg = bodies.lighten(await stored('b5', { param1: 'r'.repeat(2000) }));
    await fs.mkdir(path.join(dir, 'no-run'), { recursive: true });
    await fs.rename(path.join(dir, 'b5'), path.join(dir, 'no-run', 'b5'));
    await new Promise((r) => setImmediate(r));
    expect(bodies.hydrate(msg)).toBe(true);
    expect(Object.getOwnPropertyDescriptor(msg, 'param1')?.value).toBe('r'.repeat(2000));
  });

  it('fingerprints a param by its value up to 64 characters, else as a NUL and its digest', () => {
    expect(fingerprint('x'.repeat(64))).toBe('x'.repeat(64));
    const long = fingerprint('x'.repeat(65)) as string;
    expect(long).not.toBe('x'.repeat(65));
    expect(long.charCodeAt(0)).toBe(0);
    expect(long).toHaveLength(33);
    expect(fingerprint(undefined)).toBeNull();
  });

  it('takes a written body field as an ordinary field: written again, listed, copied', async () => {
    const { bodies } = counted();
    const msg = bodies.lighten(await stored('b7', { param1: 's'.repeat(2000), param4: 'four' }));
    msg.param4 = 'one';
    msg.param4 = 'two';
    expect(JSON.parse(JSON.stringify(msg)).param4).toBe('two');
    expect(Object.getOwnPropertyDescriptor(msg, 'param4')).toMatchObject({ writable: true, enumerable: true, configurable: true });
  });

  it('hydrates a whole message without reading anything', () => {
    const { bodies, reads } = counted();
    const whole = { msg_id: 'never-stored', dest: 'q', param1: 'small' } as unknown as Message;
    expect(bodies.hydrate(whole)).toBe(true);
    expect(reads()).toBe(0);
  });

  it('tells why a body cannot be read back: a failure other than ENOENT is not hidden behind run/', async () => {
    const msg = await stored('b8', { param1: 'e'.repeat(2000) });
    const emfile = new MessageBodies({ que: dir, run: path.join(dir, 'no-run') }, (file) => {
      if (file.includes('no-run')) throw Object.assign(new Error(`ENOENT: no such file, open '${file}'`), { code: 'ENOENT' });
      throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
    });
    const light = emfile.lighten(msg);
    expect(() => light.param1).toThrow(/EMFILE/);
  });

  it('compares params by fingerprint without reading a light message back: equal contents, equal fingerprints', async () => {
    const { bodies, reads } = counted();
    const long = 'f'.repeat(3000);
    const msg = bodies.lighten(await stored('b6', { param1: long, param2: 'short' }));
    expect(paramFingerprint(msg, 'param1')).toBe(fingerprint(long));
    expect(paramFingerprint(msg, 'param1')).not.toBe(fingerprint(`${long.slice(0, -1)}g`));
    expect(paramFingerprint(msg, 'param2')).toBe('short');
    expect(paramFingerprint(msg, 'param3')).toBeNull();
    expect(reads()).toBe(0);
    // Fingerprints are never part of what is written or copied.
    expect(Object.keys({ ...msg })).not.toContain('rq.bodyFingerprints');
    expect(JSON.parse(JSON.stringify(msg))).toEqual(JSON.parse(JSON.stringify({ ...msg })));
    msg.param1 = 'now short';
    expect(paramFingerprint(msg, 'param1')).toBe('now short');
  });
});
