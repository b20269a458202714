// readDepends: which strings are message refs, and how each is made `<queue>/<id>`.
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { readDepends, readDependsFail } from '../../src/message/depends.js';

const ID = '20261121.1643.46.613.2164022';
const ctx = { hostUrl: 'http://h:7000/', queue: 'here' };

function refusal(raw: unknown): string {
  try {
    readDepends(raw, ctx);
  } catch (err) {
    expect(err).toBeInstanceOf(RqError);
    return (err as RqError).message;
  }
  throw new Error('expected a refusal');
}

describe('readDepends', () => {
  it('reads a bare id as this queue, and a <queue>/<id> as given', () => {
    expect(readDepends([ID, `other/${ID}`], ctx)).toEqual([`here/${ID}`, `other/${ID}`]);
  });

  it('refuses an acknowledged error (a dotted id), bare or with its queue: it will never finish', () => {
    expect(refusal([`.${ID}`])).toBe(`depends[0]: expected a message ref such as test/20261121.1643.46.613.2164022, received ".${ID}"`);
    expect(refusal([`other/${ID}`, `other/.${ID}`])).toBe(
      `depends[1]: expected a message ref such as test/20261121.1643.46.613.2164022, received "other/.${ID}"`,
    );
  });
});

describe('readDepends: forms, bounds and texts', () => {
  it('reads a full id of this host as <queue>/<id> (http and https), and refuses one of another host by code', () => {
    expect(readDepends([`http://h:7000/q/other/${ID}`], ctx)).toEqual([`other/${ID}`]);
    expect(readDepends([`https://h:7000/q/other/${ID}`], { hostUrl: 'https://h:7000/', queue: 'here' })).toEqual([`other/${ID}`]);
    let err: unknown;
    try {
      readDepends([`other/${ID}`, `http://far:7000/q/other/${ID}`], ctx);
    } catch (e) {
      err = e;
    }
    expect((err as RqError).code).toBe('RQ_ERR_BAD_DEPENDENCY');
    expect((err as RqError).message).toContain(
      `depends[1]: only messages of this host can be depended on (or of another host of its fleet; config.json names none), received http://far:7000/q/other/${ID}`,
    );
  });

  it('keeps a full or bare id as given when there is no context (a client checking before it sends)', () => {
    expect(readDepends([`http://far:1/q/other/${ID}`, ID, `q/${ID}`])).toEqual([`http://far:1/q/other/${ID}`, ID, `q/${ID}`]);
  });

  it('refuses what is no ref: a bad queue name, a bad id, extra segments, text before the scheme', () => {
    const expected = (i: number, v: string) => `depends[${i}]: expected a message ref such as test/20261121.1643.46.613.2164022, received ${JSON.stringify(v)}`;
    for (const bad of [
      `Bad Queue!/${ID}`,
      `q/${ID}x`,
      `a/q/${ID}`,
      `q/${ID}/x`,
      `/${ID}`,
      `q/`,
      `xhttp://h:7000/q/other/${ID}`,
      `http://h:7000/q/Bad Queue!/${ID}`,
      `http://h:7000/q/q/nope`,
    ]) {
      expect(refusal([bad]), bad).toBe(expected(0, bad));
    }
    expect(refusal([`q/${ID}`, 5])).toBe('depends[1]: expected a message ref such as test/20261121.1643.46.613.2164022, received 5');
  });

  it('takes a comma-separated text, trimming and skipping empty parts; drops duplicates keeping order', () => {
    expect(readDepends(` b/${ID} ,, a/${ID},b/${ID}, `, ctx)).toEqual([`b/${ID}`, `a/${ID}`]);
  });

  it('takes 1 to 1000 refs and names the bound it breaks', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `q/20261121.1643.46.613.${i + 1}`);
    expect(readDepends(ids, ctx)).toHaveLength(1000);
    expect(refusal([...ids, `q/${ID}`])).toBe('depends: expected at most 1000 refs, received 1001');
    expect(refusal([])).toBe('depends: expected 1 to 1000 message refs, received []');
    expect(refusal(' , ')).toBe('depends: expected 1 to 1000 message refs, received " , "');
    expect(refusal(5)).toBe('depends: expected an array of message refs (<queue>/<id>) or a comma-separated string, received 5');
  });
});

describe('readDependsFail', () => {
  it('is one of fail, run, wait', () => {
    for (const ok of ['fail', 'run', 'wait'] as const) expect(readDependsFail(ok)).toBe(ok);
    for (const bad of ['Fail', '', 1, null])
      expect(() => readDependsFail(bad), String(bad)).toThrow(`depends_fail: expected one of fail, run, wait, received ${JSON.stringify(bad)}`);
  });
});
