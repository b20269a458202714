// Live tail over SSE: bytes appended by a running script arrive as they are written; the stream ends at done.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, TAIL_SH, send, startWebRoot, waitState } from './web-root.js';

let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({ queues: { tail: { script: TAIL_SH, num_workers: 2 } } });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** Reads an SSE response event by event. */
class SseReader {
  private buf = '';
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  readonly events: SseEvent[] = [];
  closed = false;

  constructor(res: Response) {
    this.reader = res.body!.getReader();
  }

  /** Waits for the next event (null at end of stream). */
  async next(timeoutMs = 15_000): Promise<SseEvent | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const cut = this.buf.indexOf('\n\n');
      if (cut >= 0) {
        const block = this.buf.slice(0, cut);
        this.buf = this.buf.slice(cut + 2);
        const ev: SseEvent = { event: 'message', data: '' };
        let hasData = false;
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const [k, ...rest] = line.split(':');
          const v = rest.join(':').replace(/^ /, '');
          if (k === 'event') ev.event = v;
          else if (k === 'data') {
            ev.data += v;
            hasData = true;
          } else if (k === 'id') ev.id = v;
        }
        if (!hasData) continue;
        this.events.push(ev);
        return ev;
      }
      if (this.closed) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SSE event within ${timeoutMs} ms; got ${JSON.stringify(this.events)}`);
      const chunk = await Promise.race([this.reader.read(), new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), left))]);
      if (chunk === 'timeout') continue;
      if (chunk.done) this.closed = true;
      else this.buf += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  /** Collects log text until `pred` holds or the stream ends. */
  async until(pred: (ev: SseEvent) => boolean): Promise<SseEvent> {
    for (;;) {
      const ev = await this.next();
      if (!ev) throw new Error(`stream ended first; got ${JSON.stringify(this.events)}`);
      if (pred(ev)) return ev;
    }
  }

  logText(): string {
    return this.events
      .filter((e) => e.event === 'log')
      .map((e) => JSON.parse(e.data) as string)
      .join('');
  }

  cancel(): void {
    void this.reader.cancel().catch(() => undefined);
  }
}

describe('GET /q/<q>/<id>/log/<file>/events', () => {
  it('delivers bytes a running script appends, then ends with the terminal state', async () => {
    const gate = path.join(w.root, 'gate-1');
    const id = await send(B, 'tail', { param1: 'wait_file', param2: gate });
    await waitState(B, 'tail', id, ['run']);
    const res = await fetch(`${B}/q/tail/${id}/log/stdio.log/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const sse = new SseReader(res);
    await sse.until(() => sse.logText().includes('first line\n'));
    expect(sse.logText()).not.toContain('last line');
    const before = Date.now();
    await fs.writeFile(gate, '');
    const last = await sse.until(() => sse.logText().includes('last line é\n'));
    // Pushed by a file event, not found by a slow poll.
    expect(Date.now() - before).toBeLessThan(5000);
    expect(Number(last.id)).toBe(Buffer.byteLength(sse.logText()));
    const end = await sse.until((e) => e.event === 'end');
    expect(JSON.parse(end.data)).toMatchObject({ state: 'done', status: 'done - after file', offset: Buffer.byteLength(sse.logText()) });
    expect(await sse.next()).toBeNull();
    const raw = await (await fetch(`${B}/q/tail/${id}/log/stdio.log`)).text();
    expect(sse.logText()).toBe(raw);
  });

  it('follows a message from que into run (the log does not exist yet when the tail starts)', async () => {
    await w.mgr.cmd('pause_queue', 'tail');
    let id: string;
    try {
      id = await send(B, 'tail', { param1: 'lines', param2: '3', param3: '0.1' });
      const sse = new SseReader(await fetch(`${B}/q/tail/${id}/log/stdio.log/events`));
      const first = await sse.next();
      expect(first?.event).toBe('state');
      expect(JSON.parse(first!.data).state).toBe('que');
      await w.mgr.cmd('resume_queue', 'tail');
      const end = await sse.until((e) => e.event === 'end');
      expect(JSON.parse(end.data).state).toBe('done');
      const text = sse.logText();
      expect(text).toContain('RQ START');
      // Raw bytes: the server never converts ANSI or HTML.
      expect(text).toContain('\u001b[32mline 3\u001b[0m see https://example.com/x?a=1&b=2 <b>\n');
      expect(sse.events.filter((e) => e.event === 'state').map((e) => JSON.parse(e.data).state)).toEqual(['que', 'run', 'done']);
    } finally {
      await w.mgr.cmd('resume_queue', 'tail');
    }
  });

  it('resumes from ?offset= and from Last-Event-ID; a finished log ends at once', async () => {
    const id = await send(B, 'tail', { param1: 'lines', param2: '2', param3: '0' });
    await waitState(B, 'tail', id, ['done']);
    const raw = Buffer.from(await (await fetch(`${B}/q/tail/${id}/log/stdio.log`)).arrayBuffer());
    const a = new SseReader(await fetch(`${B}/q/tail/${id}/log/stdio.log/events?offset=10`));
    await a.until((e) => e.event === 'end');
    expect(a.logText()).toBe(raw.subarray(10).toString());
    const b = new SseReader(await fetch(`${B}/q/tail/${id}/log/stdio.log/events?offset=0`, { headers: { 'last-event-id': String(raw.length - 5) } }));
    await b.until((e) => e.event === 'end');
    expect(b.logText()).toBe(raw.subarray(raw.length - 5).toString());
    const c = new SseReader(await fetch(`${B}/q/tail/${id}/log/stdio.log/events?offset=${raw.length}`));
    const end = await c.until((e) => e.event === 'end');
    expect(c.logText()).toBe('');
    expect(JSON.parse(end.data).offset).toBe(raw.length);
    expect((await fetch(`${B}/q/tail/${id}/log/stdio.log/events?offset=-1`)).status).toBe(400);
    // Past the end: from the end, and the stream says so (it was echoed as if that many bytes had been sent).
    for (const headers of [{}, { 'last-event-id': String(raw.length + 1) }] as Record<string, string>[]) {
      const d = new SseReader(await fetch(`${B}/q/tail/${id}/log/stdio.log/events?offset=999999`, { headers }));
      const over = await d.until((e) => e.event === 'end');
      expect([d.logText(), JSON.parse(over.data)]).toEqual(['', { state: 'done', status: expect.any(String), offset: raw.length }]);
    }
  });

  it('is 404 for a log file a finished message does not have, as its raw URL is, before any stream starts', async () => {
    const id = await send(B, 'tail', { param1: 'lines', param2: '1', param3: '0' });
    await waitState(B, 'tail', id, ['done']);
    expect((await fetch(`${B}/q/tail/${id}/log/nope.log`)).status).toBe(404);
    const res = await fetch(`${B}/q/tail/${id}/log/nope.log/events`, { headers: { accept: 'application/json' } });
    expect([res.status, res.headers.get('content-type'), await res.json()]).toEqual([
      404,
      'application/json; charset=utf-8',
      ['fail', `Log file nope.log not found (message tail/${id} is done)`],
    ]);
  });

  it('is 404 for unknown messages and bad names, before any stream starts', async () => {
    expect((await fetch(`${B}/q/tail/20200101.0000.00.000.1/log/stdio.log/events`)).status).toBe(404);
    expect((await fetch(`${B}/q/tail/..%2F..%2Fetc/log/stdio.log/events`)).status).toBe(404);
    expect((await fetch(`${B}/q/nope/20200101.0000.00.000.1/log/stdio.log/events`)).status).toBe(404);
  });

  it('tailviewlog serves the tail page wired to the stream', async () => {
    const id = await send(B, 'tail', { param1: 'lines', param2: '1', param3: '0' });
    await waitState(B, 'tail', id, ['done']);
    const page = await (await fetch(`${B}/q/tail/${id}/tailviewlog/stdio.log`)).text();
    expect(page).toContain(`data-events="/q/tail/${id}/log/stdio.log/events"`);
    expect(page).toContain(`href="/q/tail/${id}/log/stdio.log" id="tail-raw"`);
    expect(page).toContain('src="/js/tail.js"');
    expect(page).toContain('id="tail-follow"');
  });
});
