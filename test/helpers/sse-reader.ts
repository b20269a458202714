// Test helper: reads a Server-Sent Events response event by event (fetch's body stream, no EventSource in Node).

export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

export class SseReader {
  private buf = '';
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  /** Events parsed and not yet handed out. */
  private readonly parsed: SseEvent[] = [];
  readonly events: SseEvent[] = [];
  closed = false;

  constructor(readonly res: Response) {
    this.reader = res.body!.getReader();
  }

  static async open(url: string, init: RequestInit = {}): Promise<SseReader> {
    const res = await fetch(url, init);
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
    return new SseReader(res);
  }

  /** The next event (null at the end of the stream); comments and `retry:` blocks are skipped. */
  async next(timeoutMs = 15_000): Promise<SseEvent | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ready = this.parsed.shift();
      if (ready) {
        this.events.push(ready);
        return ready;
      }
      if (this.closed) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SSE event within ${timeoutMs} ms; last: ${JSON.stringify(this.events.slice(-3))}`);
      // A read that lost the race stays pending and is taken by the next call: no bytes are dropped.
      this.pending ??= this.reader.read();
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([this.pending, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), left)))]);
      clearTimeout(timer);
      if (chunk === 'timeout') continue;
      this.pending = null;
      if (chunk.done) this.closed = true;
      else this.take(this.decoder.decode(chunk.value, { stream: true }));
    }
  }

  /** Parses every whole block of a chunk at once (a chunk may hold thousands of events). */
  private take(text: string): void {
    const blocks = (this.buf + text).split('\n\n');
    this.buf = blocks.pop()!;
    for (const block of blocks) {
      const ev: SseEvent = { event: 'message', data: '' };
      let hasData = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const at = line.indexOf(':');
        const k = at < 0 ? line : line.slice(0, at);
        const v = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
        if (k === 'event') ev.event = v;
        else if (k === 'data') {
          ev.data += v;
          hasData = true;
        } else if (k === 'id') ev.id = v;
      }
      if (hasData) this.parsed.push(ev);
    }
  }

  /** The next event named `name`, skipping others. */
  async until(name: string, timeoutMs = 15_000): Promise<SseEvent> {
    for (;;) {
      const ev = await this.next(timeoutMs);
      if (!ev) throw new Error(`stream ended before a ${name} event; last: ${JSON.stringify(this.events.slice(-3))}`);
      if (ev.event === name) return ev;
    }
  }

  cancel(): void {
    void this.reader.cancel().catch(() => undefined);
  }
}
