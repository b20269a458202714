// Test harness: a TCP proxy on loopback whose path can go silent (bytes taken and never passed on, nothing closed, as a cut network or a
// hung peer) and heal (new connections pass again; the silent ones stay silent), to test what notices a connection that answers nothing.
import net from 'node:net';

export class SilentProxy {
  private silent = false;
  /** Connections taken while silent: each is a peer trying again, held with no answer. */
  heldWhileSilent = 0;
  private readonly open = new Set<net.Socket>();
  private readonly stall: (() => void)[] = [];

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  /** A proxy to `targetPort` on 127.0.0.1, listening on a free loopback port. */
  static async start(targetPort: number): Promise<SilentProxy> {
    let self: SilentProxy | null = null;
    const server = net.createServer((a) => self!.accept(a, targetPort));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    self = new SilentProxy(server, (server.address() as net.AddressInfo).port);
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Every connection, open and new, stops passing bytes; none is closed. */
  goSilent(): void {
    this.silent = true;
    for (const stop of this.stall.splice(0)) stop();
  }

  /** New connections pass again; those made silent stay so until closed by their ends. */
  heal(): void {
    this.silent = false;
  }

  private accept(a: net.Socket, targetPort: number): void {
    this.open.add(a);
    a.on('close', () => this.open.delete(a));
    a.on('error', () => undefined);
    if (this.silent) return void (this.heldWhileSilent++, a.resume());
    const b = net.connect(targetPort, '127.0.0.1');
    this.open.add(b);
    b.on('error', () => undefined);
    a.pipe(b).pipe(a);
    const closeBoth = () => (a.destroy(), b.destroy());
    a.on('close', closeBoth);
    b.on('close', closeBoth);
    this.stall.push(() => {
      a.unpipe(b);
      b.unpipe(a);
      // The far side is let go; the near one reads on and answers nothing.
      a.off('close', closeBoth);
      b.off('close', closeBoth);
      b.destroy();
      a.resume();
    });
  }

  async close(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}
