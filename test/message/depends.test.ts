// readDepends: which strings are message refs, and how each is made `<queue>/<id>`.
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { readDepends } from '../../src/message/depends.js';

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
    expect(refusal([`other/${ID}`, `other/.${ID}`])).toBe(`depends[1]: expected a message ref such as test/20261121.1643.46.613.2164022, received "other/.${ID}"`);
  });
});
