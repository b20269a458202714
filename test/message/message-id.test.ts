// Message id shapes: UTC stamp, hash-dir split, time decoding, full ids and relative_root.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fullId, hashParts, hostUrl, idStamp, idTime, normaliseRelativeRoot, parseFullId } from '../../src/message/message-id.js';

describe('idStamp', () => {
  it('formats UTC as YYYYMMDD.HHMM.SS.mmm with zero padding', () => {
    expect(idStamp(Date.UTC(2026, 10, 21, 16, 43, 46, 613))).toBe('20261121.1643.46.613');
    expect(idStamp(Date.UTC(2010, 0, 2, 3, 4, 5, 6))).toBe('20100102.0304.05.006');
    expect(idStamp(Date.UTC(1999, 11, 31, 23, 59, 59, 999))).toBe('19991231.2359.59.999');
    expect(idStamp(0)).toBe('19700101.0000.00.000');
  });

  it('gives what the date formats to for any instant, in any order: one second formats its date once and no other reuses it', () => {
    const fromIso = (ms: number) => new Date(ms).toISOString().replace(/^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})Z$/, '$1$2$3.$4$5.$6.$7');
    const last = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const instant = fc.integer({ min: 0, max: last });
    // Each instant is followed by its neighbours: the same second's other milliseconds, and the seconds either side.
    const near = fc.tuple(instant, fc.array(fc.integer({ min: -1500, max: 1500 }), { maxLength: 6 }));
    fc.assert(
      fc.property(near, ([ms, steps]) => {
        for (const t of [ms, ...steps.map((s) => Math.min(last, Math.max(0, ms + s)))]) expect(idStamp(t)).toBe(fromIso(t));
      }),
    );
  });

  it('ignores the local time zone', () => {
    const before = process.env.TZ;
    process.env.TZ = 'Pacific/Kiritimati'; // UTC+14: the local date differs from the UTC date
    try {
      expect(idStamp(Date.UTC(2026, 0, 1, 0, 0, 0, 0))).toBe('20260101.0000.00.000');
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
});

describe('hashParts', () => {
  it('splits day, hour, minute off an id', () => {
    expect(hashParts('20261121.1643.46.613.2164022')).toEqual(['20261121', '16', '43']);
  });
  it('accepts the acknowledged-error dot', () => {
    expect(hashParts('.20100901.1022.01.123.456789')).toEqual(['20100901', '10', '22']);
  });
  it('returns null for ids without the shape', () => {
    for (const bad of ['', 'x20261121.1643', '2026112.1643.46.613.1', '20261121-1643', '20261121.16', '../20261121.1643']) {
      expect(hashParts(bad), bad).toBeNull();
    }
  });
});

describe('idTime', () => {
  it('decodes the UTC instant of an id', () => {
    const ms = Date.UTC(2026, 10, 21, 16, 43, 46, 613);
    expect(idTime('20261121.1643.46.613.2164022')).toBe(ms);
    expect(idTime('.20261121.1643.46.613.2164022')).toBe(ms);
  });
  it('round-trips with idStamp', () => {
    for (const ms of [0, 1_000_000_000_123, Date.UTC(2038, 0, 19, 3, 14, 7, 999)]) expect(idTime(`${idStamp(ms)}.42`)).toBe(ms);
  });
  it('returns null for other text', () => {
    expect(idTime('not-an-id')).toBeNull();
    expect(idTime('20261121.1643.46')).toBeNull();
  });
});

describe('full ids', () => {
  const host = { host: '127.0.0.1', port: 34917, root: '/' };

  it('builds http://host:port/root/q/<q>/<id>', () => {
    expect(hostUrl(host)).toBe('http://127.0.0.1:34917/');
    expect(fullId(host, 'test', '20261121.1643.46.613.2164022')).toBe('http://127.0.0.1:34917/q/test/20261121.1643.46.613.2164022');
    expect(fullId({ ...host, root: '/therq/' }, 'test', '1')).toBe('http://127.0.0.1:34917/therq/q/test/1');
  });

  it('parses queue and short id back, ignoring the host part', () => {
    expect(parseFullId('http://127.0.0.1:34917/q/test/20261121.1643.46.613.2164022')).toEqual({ queue: 'test', id: '20261121.1643.46.613.2164022' });
    expect(parseFullId('http://other:1/therq/q/a-b_c/20261121.1643.46.613.1/')).toEqual({ queue: 'a-b_c', id: '20261121.1643.46.613.1' });
    expect(parseFullId('/q/test/20261121.1643.46.613.1')).toEqual({ queue: 'test', id: '20261121.1643.46.613.1' });
    expect(parseFullId(fullId(host, 'zürich', '1'))).toEqual({ queue: 'zürich', id: '1' });
    expect(parseFullId('http://h:1/q/caf%C3%A9/1')).toEqual({ queue: 'café', id: '1' });
  });

  it('returns null for text that is not a full id', () => {
    for (const bad of ['', 'test', 'http://h:1/q/test', 'http://h:1/x/test/1', 'http://h:1/q//1', 'http://h:1/q/%E0%A4%A/1']) {
      expect(parseFullId(bad), bad).toBeNull();
    }
  });
});

describe('normaliseRelativeRoot', () => {
  it('gives a leading and exactly one trailing slash', () => {
    expect(normaliseRelativeRoot(undefined)).toBe('/');
    expect(normaliseRelativeRoot('')).toBe('/');
    expect(normaliseRelativeRoot('/')).toBe('/');
    expect(normaliseRelativeRoot('//')).toBe('/');
    expect(normaliseRelativeRoot('/therq')).toBe('/therq/');
    expect(normaliseRelativeRoot('/therq/')).toBe('/therq/');
    expect(normaliseRelativeRoot('/therq///')).toBe('/therq/');
    expect(normaliseRelativeRoot('therq')).toBe('/therq/');
    expect(normaliseRelativeRoot('/a/b/')).toBe('/a/b/');
  });
});

describe('id and URL shapes: anchored at both ends', () => {
  it('idTime reads an id (or an acknowledged one) from its first character only', () => {
    expect(idTime('.20261121.1643.46.613.5')).toBe(Date.UTC(2026, 10, 21, 16, 43, 46, 613));
    expect(idTime('x20261121.1643.46.613.5')).toBeNull();
  });

  it('parseFullId takes the id as the last segment: a longer path is no full id', () => {
    expect(parseFullId('http://h:1/q/a/20261121.1643.46.613.5/')).toEqual({ queue: 'a', id: '20261121.1643.46.613.5' });
    expect(parseFullId('http://h:1/q/a/20261121.1643.46.613.5/attach/x')).toBeNull();
    expect(parseFullId('http://h:1/q/a/20261121.1643.46.613.5?x=1')).toBeNull();
  });

  it('normaliseRelativeRoot drops every leading and trailing slash before adding one of each', () => {
    expect(normaliseRelativeRoot('//rq//')).toBe('/rq/');
    expect(normaliseRelativeRoot('///')).toBe('/');
    expect(normaliseRelativeRoot(undefined)).toBe('/');
  });
});
