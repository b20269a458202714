// Records other hosts wrote in etcd, taken only in the shapes rq writes: a field with escapes or of another form leaves the record out, as if unknown.
import { describe, expect, it } from 'vitest';
import { trustedHostRecord, trustedSeenRecord } from '../../src/fleet/record-shapes.js';

/** What a terminal would run: clear the screen, turn red, and forge a line of `rq fleet`. */
const ESCAPE = '\u001b[2J\u001b[31mRED\nrq-9  up  fake-line';
const host = {
  host: 'rq-1',
  url: 'http://127.0.0.1:34331',
  version: '3.0.0',
  started_at: '2026-12-06T19:00:00.000Z',
  instance: 'a1b2c3d4e5f60718',
  queues: {},
};
const figures = { status: 'DISK FULL', ready: 0, running: 0, workers: 1 };
const seen = { host: 'rq-1', url: 'http://127.0.0.1:34331', joined_at: '2026-12-06T19:00:00.000Z' };

describe('record shapes', () => {
  it('takes a host record as rq writes it', () => {
    const rec = { ...host, queues: { work: figures, relay: { ...figures, status: 'UP' } } };
    expect(trustedHostRecord(JSON.stringify(rec))).toEqual(rec);
    expect(trustedHostRecord(JSON.stringify({ ...host, version: '3.1.0-rc.1' }))).not.toBeNull();
  });

  it.each([
    ['host', { ...host, host: ESCAPE }],
    ['url', { ...host, url: `http://a/${ESCAPE}` }],
    ['version', { ...host, version: `3.0.0${ESCAPE}` }],
    ['started_at', { ...host, started_at: ESCAPE }],
    ['started_at of another form', { ...host, started_at: 'Sun Dec 06 2026' }],
    ['instance', { ...host, instance: ESCAPE }],
    ['a queue name', { ...host, queues: { [ESCAPE]: figures } }],
    ['a queue status', { ...host, queues: { work: { ...figures, status: `UP${ESCAPE}` } } }],
    ['a missing field', { ...host, instance: undefined }],
  ])('refuses a host record with escapes or another form in its %s', (_, rec) => {
    expect(trustedHostRecord(JSON.stringify(rec))).toBeNull();
  });

  it('takes a seen record with its times as rq writes them, and no other', () => {
    expect(trustedSeenRecord(JSON.stringify(seen))).toEqual(seen);
    expect(trustedSeenRecord(JSON.stringify({ ...seen, left_at: '2026-12-06T19:05:00.000Z' }))).not.toBeNull();
    for (const bad of [
      { ...seen, joined_at: ESCAPE },
      { ...seen, left_at: ESCAPE },
      { ...seen, host: ESCAPE },
      { ...seen, url: 'javascript:alert(1)' },
    ])
      expect(trustedSeenRecord(JSON.stringify(bad)), JSON.stringify(bad)).toBeNull();
    expect(trustedSeenRecord('not json')).toBeNull();
  });
});
