// Closes evicted connections that never sent a request a while after they lose their slot, not at once: a client that opens a new connection the moment one is closed cannot make the web accept and close connections as fast as the CPU allows.
import type { Socket } from 'node:net';

/**
 * Held sockets are paused (nothing more is read, so no request of theirs is ever served) and hold
 * no slot of the connection limits, only a file descriptor. Each is held between half and one and
 * a half times `holdMs`, at random: a flood evicted in one burst comes back spread out, not as a
 * burst of connects that everyone else waits behind. At most `max` are held: past it the one held
 * longest is closed at once, so a flood of more than that costs descriptors no more than
 * max_connections + `max`; such a flood spins, but only as fast as its own reconnects allow.
 */
export class SlowClose {
  /** Oldest first. */
  private readonly held = new Map<Socket, NodeJS.Timeout>();

  constructor(
    private readonly holdMs: number,
    private readonly max: number,
    private readonly random: () => number = Math.random,
  ) {}

  get size(): number {
    return this.held.size;
  }

  close(socket: Socket): void {
    if (this.held.has(socket) || socket.destroyed) return;
    if (this.held.size >= this.max) {
      const oldest = this.held.keys().next();
      if (!oldest.done) this.release(oldest.value);
    }
    socket.pause();
    socket.on('error', () => undefined);
    const timer = setTimeout(() => this.release(socket), this.holdMs * (0.5 + this.random()));
    this.held.set(socket, timer);
    socket.once('close', () => {
      clearTimeout(timer);
      this.held.delete(socket);
    });
  }

  private release(socket: Socket): void {
    const timer = this.held.get(socket);
    if (timer) clearTimeout(timer);
    this.held.delete(socket);
    socket.destroy();
  }
}
