// Which connection makes room for a new one: the web's connections by peer, each peer's idle ones oldest first, and the admit / evict / refuse decision.

/** Which bound a new connection met: its own peer's (max_connections_per_address) or the server's (max_connections). */
export type Cap = 'peer' | 'total';

export type Admission<C> =
  | { kind: 'admit' }
  /** Close `victim` (idle, of `victimPeer`; `fresh`: it never sent a whole request), then admit the new connection in its place. */
  | { kind: 'evict'; cap: Cap; victim: C; victimPeer: string; fresh: boolean }
  /** Nothing may be evicted for it: every connection it could take the place of is busy or just accepted. `held` is what its peer (or the server) holds. */
  | { kind: 'refuse'; cap: Cap; held: number };

interface Entry {
  peer: string;
  /** Requests read and not yet answered; a stream (SSE, a log tail) is one that is never answered. */
  inFlight: number;
  /** When it last became idle, on the table's own clock: the order of eviction. */
  idleSince: number;
  /** It has sent a whole request (it is more than a half-open connection). */
  served: boolean;
  /**
   * The server has had its turn to read what the connection sent before it was accepted (settle).
   * Until then a connection that sent nothing yet may well have its request waiting unread in the
   * kernel: evicting it would reset a client that did everything right (a browser's burst of
   * connections, say), so it cannot be evicted.
   */
  settled: boolean;
}

interface Peer<C> {
  count: number;
  /** Its idle connections (no request in flight: never sent one yet, or between two), in the order they became idle. */
  idle: Set<C>;
}

/**
 * A connection with no request in flight costs its client nothing to lose: it has either not sent
 * a whole request yet (a slow or silent opener, the half-open flood of a hostile client) or it is
 * a keep-alive connection between requests, which HTTP clients expect to be closed at any time.
 * So when the server is full a newcomer is not refused: the idle connection that has waited
 * longest, of the peer holding the most connections, is closed for it. Refusing the newcomer
 * instead would hand the server to whoever opened connections first and held them. A peer at its
 * own cap only ever makes room from its own connections, so it is the only one refused for it.
 * Busy connections (a request being read or answered, a stream) are never taken: a request that
 * was read is always answered. Nor is one just accepted (`settled`), whose request may be unread.
 */
export class ConnectionTable<C> {
  private readonly entries = new Map<C, Entry>();
  private readonly peers = new Map<string, Peer<C>>();
  /** A counter, not a clock: only the order in which connections became idle matters. */
  private tick = 0;

  constructor(
    private readonly maxTotal: number,
    private readonly maxPerPeer: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  heldBy(peer: string): number {
    return this.peers.get(peer)?.count ?? 0;
  }

  /** Idle connections of `peer`, settled or not (tests). */
  idleOf(peer: string): number {
    return this.peers.get(peer)?.idle.size ?? 0;
  }

  /** What to do with a new connection from `peer`; changes nothing (the caller removes a victim, then adds). */
  admit(peer: string): Admission<C> {
    const mine = this.heldBy(peer);
    if (mine >= this.maxPerPeer) {
      const victim = this.oldestEvictable(peer);
      return victim === undefined ? { kind: 'refuse', cap: 'peer', held: mine } : this.evict('peer', victim, peer);
    }
    if (this.entries.size < this.maxTotal) return { kind: 'admit' };
    const from = this.victimPeer(peer, mine);
    const victim = from === undefined ? undefined : this.oldestEvictable(from);
    return victim === undefined || from === undefined ? { kind: 'refuse', cap: 'total', held: this.entries.size } : this.evict('total', victim, from);
  }

  private evict(cap: Cap, victim: C, victimPeer: string): Admission<C> {
    return { kind: 'evict', cap, victim, victimPeer, fresh: !this.entries.get(victim)?.served };
  }

  /** A new connection: idle until its first request is read, and not evictable until settled. */
  add(conn: C, peer: string): void {
    if (this.entries.has(conn)) return;
    let p = this.peers.get(peer);
    if (!p) this.peers.set(peer, (p = { count: 0, idle: new Set<C>() }));
    p.count++;
    this.entries.set(conn, { peer, inFlight: 0, idleSince: this.tick++, served: false, settled: false });
    p.idle.add(conn);
  }

  /** The server has read what `conn` sent before it was accepted: if it is still idle, it is a half-open connection, and may be evicted. */
  settle(conn: C): void {
    const e = this.entries.get(conn);
    if (e) e.settled = true;
  }

  /** A request's headers were read on `conn`: it is busy until that request is answered. */
  requestStarted(conn: C): void {
    const e = this.entries.get(conn);
    if (!e) return;
    e.inFlight++;
    e.served = true;
    e.settled = true;
    this.peers.get(e.peer)?.idle.delete(conn);
  }

  /** A request on `conn` was answered (or abandoned); with none left in flight it is idle again, the newest idle. */
  requestEnded(conn: C): void {
    const e = this.entries.get(conn);
    if (!e || e.inFlight === 0) return;
    e.inFlight--;
    if (e.inFlight > 0) return;
    e.idleSince = this.tick++;
    this.peers.get(e.peer)?.idle.add(conn);
  }

  /** The connection is gone (closed, or evicted); safe to call more than once. */
  remove(conn: C): void {
    const e = this.entries.get(conn);
    if (!e) return;
    this.entries.delete(conn);
    const p = this.peers.get(e.peer);
    if (!p) return;
    p.idle.delete(conn);
    if (--p.count === 0) this.peers.delete(e.peer);
  }

  /** The idle connection of `peer` that has waited longest, of those settled (a burst of new ones is skipped over). */
  private oldestEvictable(peer: string): C | undefined {
    for (const conn of this.peers.get(peer)?.idle ?? []) if (this.entries.get(conn)?.settled) return conn;
    return undefined;
  }

  /**
   * The peer to take an idle connection from when the server is full: the one holding the most
   * connections among those that have an idle one and hold more than the newcomer's peer (or are
   * that peer). A peer is never made to give up a connection to one that holds as many or more, so
   * a client holding a few connections keeps them however many addresses a flood comes from; the
   * newcomer's own peer gives one up only when no bigger peer has one idle. Between peers holding
   * as many, the connection idle longest goes.
   */
  private victimPeer(newcomer: string, mine: number): string | undefined {
    let best: string | undefined;
    let bestCount = -1;
    let bestSince = Infinity;
    for (const [peer, p] of this.peers) {
      if (p.idle.size === 0 || (peer !== newcomer && p.count <= mine)) continue;
      if (p.count < bestCount) continue;
      const oldest = this.oldestEvictable(peer);
      const since = oldest === undefined ? Infinity : (this.entries.get(oldest)?.idleSince ?? Infinity);
      if (oldest === undefined || (p.count === bestCount && since >= bestSince)) continue;
      best = peer;
      bestCount = p.count;
      bestSince = since;
    }
    return best;
  }
}
