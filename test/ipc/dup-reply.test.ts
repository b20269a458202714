// The fd-4 answer to `dup`: what the queue writes is what the script kit reads back, and a refusal stays whole.
import { describe, expect, it } from 'vitest';
import { dupFail, dupOk, readDupReply } from '../../src/ipc/dup-reply.js';

describe('dup reply', () => {
  it('an ok carries the copy id; a refusal is read as it came, never as an id', () => {
    const id = 'http://127.0.0.1:3333/q/b/20261121.1643.46.613.1';
    expect(readDupReply(dupOk(id))).toEqual({ ok: true, id, reply: `ok ${id}` });
    expect(readDupReply(dupFail("couldn't connect to queue - x"))).toEqual({ ok: false, reply: "fail couldn't connect to queue - x" });
    expect(readDupReply('okay 1')).toEqual({ ok: false, reply: 'okay 1' });
  });
});
