// Which connection makes room for a new one (src/web/connection-table.ts): the peer's own oldest idle at its cap, the biggest peer's oldest idle when the server is full, never a busy one, never a smaller peer's.
import { describe, expect, it } from 'vitest';
import { ConnectionTable } from '../../src/web/connection-table.js';

/** A table of named connections; `open('a', 3)` adds a1..a3 from peer a, oldest first. */
function table(maxTotal: number, maxPerPeer: number) {
  const t = new ConnectionTable<string>(maxTotal, maxPerPeer);
  const seq = new Map<string, number>();
  const open = (peer: string, n = 1): string[] =>
    Array.from({ length: n }, () => {
      const i = (seq.get(peer) ?? 0) + 1;
      seq.set(peer, i);
      const conn = `${peer}${i}`;
      t.add(conn, peer);
      t.settle(conn);
      return conn;
    });
  return { t, open };
}

describe('ConnectionTable.admit', () => {
  it('admits while under both bounds', () => {
    const { t, open } = table(4, 2);
    open('a');
    open('b', 2);
    expect(t.admit('a')).toEqual({ kind: 'admit' });
    expect(t.admit('c')).toEqual({ kind: 'admit' });
    expect(t.size).toBe(3);
    expect(t.heldBy('b')).toBe(2);
  });

  it("a peer at its own cap gives up its own oldest idle connection, never another peer's", () => {
    const { t, open } = table(100, 3);
    open('b');
    const [a1, a2] = open('a', 3);
    expect(t.admit('a')).toEqual({ kind: 'evict', cap: 'peer', victim: a1, victimPeer: 'a', fresh: true });
    t.requestStarted(a1);
    expect(t.admit('a')).toMatchObject({ kind: 'evict', victim: a2 });
  });

  it('a peer at its cap whose connections are all busy is refused, and only that peer', () => {
    const { t, open } = table(100, 2);
    for (const c of open('a', 2)) t.requestStarted(c);
    expect(t.admit('a')).toEqual({ kind: 'refuse', cap: 'peer', held: 2 });
    expect(t.admit('b')).toEqual({ kind: 'admit' });
  });

  it('a connection idle again after its request is the newest idle: the one idle longest goes first', () => {
    const { t, open } = table(100, 3);
    const [a1, a2, a3] = open('a', 3);
    t.requestStarted(a1);
    t.requestEnded(a1);
    expect(t.admit('a')).toMatchObject({ victim: a2 });
    t.requestStarted(a2);
    expect(t.admit('a')).toMatchObject({ victim: a3 });
    t.requestStarted(a3);
    expect(t.admit('a')).toMatchObject({ victim: a1 });
  });

  it('says whether the victim ever sent a whole request: a half-open connection is fresh, a keep-alive one between requests is not', () => {
    const { t, open } = table(100, 2);
    const [a1, a2] = open('a', 2);
    t.requestStarted(a1);
    t.requestEnded(a1);
    expect(t.admit('a')).toMatchObject({ victim: a2, fresh: true });
    t.remove(a2);
    open('a');
    expect(t.admit('a')).toMatchObject({ victim: a1, fresh: false });
  });

  it('a connection just accepted is not evicted before it is settled: its request may be waiting unread', () => {
    const { t, open } = table(100, 3);
    const [a1] = open('a');
    t.add('burst1', 'a');
    t.add('burst2', 'a');
    t.requestStarted(a1);
    // a1 is busy, the burst is unsettled: nothing of a's may go.
    expect(t.admit('a')).toEqual({ kind: 'refuse', cap: 'peer', held: 3 });
    t.settle('burst2');
    // The oldest idle (burst1) is skipped over for the oldest settled one.
    expect(t.admit('a')).toMatchObject({ kind: 'evict', victim: 'burst2', fresh: true });
    t.requestEnded(a1);
    expect(t.admit('a')).toMatchObject({ victim: 'burst2' });
  });

  it('a full server skips a peer whose idle connections are all unsettled', () => {
    const { t, open } = table(4, 10);
    t.add('big1', 'big');
    t.add('big2', 'big');
    t.add('big3', 'big');
    const [s1] = open('small');
    expect(t.admit('new')).toMatchObject({ kind: 'evict', victim: s1, victimPeer: 'small' });
    t.settle('big3');
    expect(t.admit('new')).toMatchObject({ kind: 'evict', victim: 'big3', victimPeer: 'big' });
  });

  it('pipelined requests keep a connection busy until the last is answered', () => {
    const { t, open } = table(100, 1);
    const [a1] = open('a');
    t.requestStarted(a1);
    t.requestStarted(a1);
    t.requestEnded(a1);
    expect(t.admit('a')).toMatchObject({ kind: 'refuse' });
    t.requestEnded(a1);
    expect(t.admit('a')).toMatchObject({ kind: 'evict', victim: a1 });
    // An end with none in flight (a response closed twice) changes nothing.
    t.requestEnded(a1);
    expect(t.idleOf('a')).toBe(1);
  });

  it('a full server takes the oldest idle connection of the peer holding the most', () => {
    const { t, open } = table(6, 10);
    open('a', 2);
    const [b1] = open('b', 3);
    open('c');
    expect(t.admit('d')).toEqual({ kind: 'evict', cap: 'total', victim: b1, victimPeer: 'b', fresh: true });
  });

  it("skips a peer whose connections are all busy (a stream is one) and takes the next biggest's", () => {
    const { t, open } = table(6, 10);
    for (const c of open('b', 3)) t.requestStarted(c);
    const [a1] = open('a', 2);
    open('c');
    expect(t.admit('d')).toMatchObject({ kind: 'evict', victim: a1, victimPeer: 'a' });
  });

  it('never takes from a peer holding no more than the newcomer: a flood from many addresses cannot evict a small client', () => {
    const { t, open } = table(5, 10);
    const [n1] = open('normal');
    for (const c of open('flood1', 2)) t.requestStarted(c);
    for (const c of open('flood2', 2)) t.requestStarted(c);
    // flood1 holds 2, all busy; the normal client's 1 idle connection is not the flood's to take.
    expect(t.admit('flood1')).toEqual({ kind: 'refuse', cap: 'total', held: 5 });
    // A peer holding nothing yet may take it: the normal client holds more than it does.
    expect(t.admit('new')).toEqual({ kind: 'evict', cap: 'total', victim: n1, victimPeer: 'normal', fresh: true });
  });

  it("a full server takes the newcomer's own idle connection only when no bigger peer has one", () => {
    const { t, open } = table(4, 10);
    const [a1] = open('a', 2);
    const [b1] = open('b', 2);
    // b holds as many as a, not more: a's newcomer makes room from a, though b's connection waited as long.
    expect(t.admit('a')).toMatchObject({ kind: 'evict', victim: a1, victimPeer: 'a' });
    expect(t.admit('b')).toMatchObject({ kind: 'evict', victim: b1, victimPeer: 'b' });
    t.remove(b1);
    open('a');
    // a now holds 3 to b's 1: b's newcomer takes from a.
    expect(t.admit('b')).toMatchObject({ kind: 'evict', victim: a1, victimPeer: 'a' });
  });

  it('between peers holding as many, takes the connection idle longest', () => {
    const { t, open } = table(4, 10);
    const [a1, a2] = open('a', 2);
    const [b1] = open('b', 2);
    t.requestStarted(a1);
    t.requestEnded(a1);
    t.requestStarted(a2);
    t.requestEnded(a2);
    expect(t.admit('c')).toMatchObject({ victim: b1, victimPeer: 'b' });
  });

  it('refuses (503) when nothing anywhere may be evicted', () => {
    const { t, open } = table(3, 10);
    for (const c of open('a', 3)) t.requestStarted(c);
    expect(t.admit('b')).toEqual({ kind: 'refuse', cap: 'total', held: 3 });
  });

  it('the per-peer cap is checked first: a peer at its cap on a full server only ever evicts its own', () => {
    const { t, open } = table(4, 2);
    const [a1] = open('a', 2);
    open('b', 2);
    expect(t.admit('a')).toMatchObject({ kind: 'evict', cap: 'peer', victim: a1 });
    t.requestStarted(a1);
    t.requestStarted('a2');
    expect(t.admit('a')).toEqual({ kind: 'refuse', cap: 'peer', held: 2 });
  });
});

describe('ConnectionTable bookkeeping', () => {
  it('remove frees the slot and forgets an empty peer; twice is harmless', () => {
    const { t, open } = table(2, 2);
    const [a1, a2] = open('a', 2);
    t.remove(a1);
    t.remove(a1);
    expect(t.size).toBe(1);
    expect(t.heldBy('a')).toBe(1);
    t.remove(a2);
    expect(t.heldBy('a')).toBe(0);
    expect(t.idleOf('a')).toBe(0);
    expect(t.admit('a')).toEqual({ kind: 'admit' });
  });

  it('a removed connection is never chosen, and calls on unknown connections are ignored', () => {
    const { t, open } = table(10, 2);
    const [a1, a2] = open('a', 2);
    t.remove(a1);
    t.requestStarted(a1);
    t.requestEnded(a1);
    open('a');
    expect(t.admit('a')).toMatchObject({ victim: a2 });
    t.add(a2, 'a');
    expect(t.heldBy('a')).toBe(2);
  });
});
