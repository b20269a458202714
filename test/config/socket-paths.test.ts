// Which socket paths fit under a root: the room left for a queue name, exactly at its boundary, and the root's own sockets.
import { describe, expect, it } from 'vitest';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { SOCKET_PATH_MAX_BYTES, queueNameFitProblem, queueNameRoom, queueSockets, rootSocketProblem } from '../../src/config/socket-paths.js';

const bytes = (s: string) => Buffer.byteLength(s);
/** An absolute root of exactly `n` bytes. */
const rootOf = (n: number) => `/${'r'.repeat(n - 1)}`;

describe('queueSockets', () => {
  it('lists every socket a queue has: each path of queuePaths that is a socket', () => {
    const p = queuePaths('/srv/rq', 'q') as unknown as Record<string, unknown>;
    const sockets = Object.values(p).filter((v): v is string => typeof v === 'string' && /\.sock$|\/sock$/.test(v));
    expect(sockets.length).toBeGreaterThanOrEqual(2);
    expect(queueSockets('/srv/rq', 'q').sort()).toEqual(sockets.sort());
  });
});

describe('queueNameRoom', () => {
  it('is what the longest socket path, events.sock, leaves of 107 bytes', () => {
    expect(SOCKET_PATH_MAX_BYTES).toBe(107);
    // /srv/rq (7) + /queues/ (8) + <q> + /events.sock (12) = 107
    expect(queueNameRoom('/srv/rq')).toEqual({ maxBytes: 80, socket: 'queues/<q>/events.sock' });
    expect(queueNameRoom(rootOf(20)).maxBytes).toBe(67);
  });

  it('a name exactly at the room has every socket path at most 107 bytes, one more byte has one over', () => {
    for (const root of ['/tmp/rq-test-abc123', rootOf(50), rootOf(86)]) {
      const max = queueNameRoom(root).maxBytes;
      const fits = 'a'.repeat(max);
      expect(Math.max(...queueSockets(root, fits).map(bytes)), root).toBe(SOCKET_PATH_MAX_BYTES);
      expect(Math.max(...queueSockets(root, `${fits}a`).map(bytes)), root).toBe(SOCKET_PATH_MAX_BYTES + 1);
    }
  });
});

describe('queueNameFitProblem', () => {
  const room = queueNameRoom('/srv/rq');

  it('accepts a name exactly at the limit and refuses one more character, with the limit and what it got', () => {
    expect(queueNameFitProblem(room, 'a'.repeat(80))).toBeNull();
    expect(queueNameFitProblem(room, 'a')).toBeNull();
    expect(queueNameFitProblem(room, 'a'.repeat(81))).toBe(
      'queue name: expected at most 80 characters for this root (socket path queues/<q>/events.sock must fit in 107 bytes), received 81 characters',
    );
  });

  it('names the field it is given', () => {
    expect(queueNameFitProblem(room, 'b'.repeat(120), 'queue[name]')).toBe(
      'queue[name]: expected at most 80 characters for this root (socket path queues/<q>/events.sock must fit in 107 bytes), received 120 characters',
    );
  });

  it('counts bytes, as the kernel does: a non-ASCII name says both', () => {
    // 40 two-byte characters: 80 bytes fits; 41 do not.
    expect(queueNameFitProblem(room, 'é'.repeat(40))).toBeNull();
    expect(queueNameFitProblem(room, 'é'.repeat(41))).toBe(
      'queue name: expected at most 80 characters for this root (socket path queues/<q>/events.sock must fit in 107 bytes), received 41 characters (82 bytes in UTF-8)',
    );
  });
});

describe('rootSocketProblem', () => {
  it('accepts a root whose config/queuemgr.sock is exactly 107 bytes, and leaves it room for one-character queue names', () => {
    const root = rootOf(86);
    expect(bytes(rootPaths(root).mgrSock)).toBe(107);
    expect(rootSocketProblem(root)).toBeNull();
    expect(queueNameRoom(root).maxBytes).toBe(1);
  });

  it('refuses a root one byte longer, naming the socket and the longest root there may be', () => {
    const root = rootOf(87);
    expect(rootSocketProblem(root)).toBe(
      `root ${root}: expected a path of at most 86 bytes (socket path config/queuemgr.sock must fit in 107 bytes), received 87 bytes`,
    );
    expect(rootSocketProblem(rootOf(300))).toMatch(/^root \/r+: expected a path of at most 86 bytes .*received 300 bytes$/);
  });

  it('accepts the roots people use', () => {
    for (const root of ['/', '/srv/rq', '/home/someone/rq', '/tmp/rq-test-XXXXXX']) expect(rootSocketProblem(root), root).toBeNull();
  });
});
