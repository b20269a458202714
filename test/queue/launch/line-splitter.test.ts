// The fd 3 line splitter: lines across reads, UTF-8 and binary bytes, the line limit, and linear time on a long line.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type SplitLine, LineSplitter } from '../../../src/queue/launch/line-splitter.js';
import { testSeed } from '../../helpers/seeded-random.mjs';

const enc = (s: string) => Buffer.from(s, 'utf8');

/** Every line of `chunks` pushed one by one, then the end. */
function splitAll(max: number, chunks: Buffer[]): SplitLine[] {
  const s = new LineSplitter(max);
  return [...chunks.flatMap((c) => s.push(c)), ...s.end()];
}

/** The reference: the whole stream split at once, each line decoded on its own. */
function model(max: number, bytes: Buffer): SplitLine[] {
  const out: SplitLine[] = [];
  let from = 0;
  for (;;) {
    const nl = bytes.indexOf(10, from);
    const line = bytes.subarray(from, nl < 0 ? bytes.length : nl);
    if (line.length > max) out.push({ cutBytes: line.length });
    else {
      let text = line.toString('utf8');
      if (from === 0 && text.startsWith('\uFEFF')) text = text.slice(1);
      text = text.endsWith('\r') ? text.slice(0, -1) : text;
      // A last line without its newline counts unless nothing is left of it.
      if (nl >= 0 || text !== '') out.push(text);
    }
    if (nl < 0) return out;
    from = nl + 1;
  }
}

/** Bytes rich in what the splitter must get right: newlines, CRs, multibyte characters, invalid UTF-8, runs. */
const bytesArb = fc
  .array(
    fc.oneof(
      fc.constantFrom(enc('\n'), enc('\r\n'), enc('é'), enc('€'), enc('😀'), enc('\uFEFF'), Buffer.from([0xff]), Buffer.from([0xe2, 0x82]), Buffer.from([0])),
      fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
      fc.integer({ min: 1, max: 300 }).map((n) => Buffer.alloc(n, 0x61)),
    ),
    { maxLength: 60 },
  )
  .map((parts) => Buffer.concat(parts));

/** `bytes` cut at the given offsets (sorted, deduplicated, clamped). */
function cutAt(bytes: Buffer, offsets: number[]): Buffer[] {
  const points = [...new Set(offsets.map((o) => o % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    chunks.push(bytes.subarray(from, p));
    from = p;
  }
  return chunks;
}

describe('LineSplitter', () => {
  it('keeps partial lines across reads and strips CR', () => {
    const s = new LineSplitter(1024);
    expect(s.push(enc('do'))).toEqual([]);
    expect(s.push(enc('ne ok\r\nrun 1\nru'))).toEqual(['done ok', 'run 1']);
    expect(s.push(enc('n 2\n'))).toEqual(['run 2']);
    expect(s.end()).toEqual([]);
  });

  it('keeps a multibyte character split between reads and flushes a last line without newline', () => {
    const s = new LineSplitter(1024);
    const bytes = enc('run héllo\ndone é');
    const cut = 6; // inside the two bytes of é
    expect(s.push(bytes.subarray(0, cut))).toEqual([]);
    expect(s.push(bytes.subarray(cut))).toEqual(['run héllo']);
    expect(s.end()).toEqual(['done é']);
    expect(s.push(enc('run again\n'))).toEqual(['run again']);
    expect(s.end()).toEqual([]);
  });

  it('turns invalid UTF-8 into U+FFFD and drops a byte order mark at the start only', () => {
    expect(splitAll(1024, [Buffer.from([0xef, 0xbb]), Buffer.from([0xbf, 0x64, 0x6f, 0x6e, 0x65, 0x0a, 0xff, 0x0a])])).toEqual(['done', '\uFFFD']);
    expect(splitAll(1024, [enc('run 1\n\uFEFFdone\n')])).toEqual(['run 1', '\uFEFFdone']);
  });

  it('reports a line over the limit once, by its length, and goes on with the next line', () => {
    const s = new LineSplitter(1024);
    expect(s.push(enc('run 1\n' + 'x'.repeat(1000)))).toEqual(['run 1']);
    expect(s.push(enc('y'.repeat(1000)))).toEqual([]);
    expect(s.push(enc('z'.repeat(10) + '\ndone ok\n'))).toEqual([{ cutBytes: 2010 }, 'done ok']);
    expect(splitAll(4, [enc('1234\n12345\n')])).toEqual(['1234', { cutBytes: 5 }]);
    expect(splitAll(4, [enc('123456')])).toEqual([{ cutBytes: 6 }]);
  });

  it('gives the same lines whatever the read boundaries, as splitting the stream whole (property, seeded)', () => {
    fc.assert(
      fc.property(bytesArb, fc.array(fc.nat(), { maxLength: 12 }), fc.constantFrom(8, 64, 1024), (bytes, offsets, max) => {
        expect(splitAll(max, cutAt(bytes, offsets))).toEqual(model(max, bytes));
      }),
      { seed: testSeed(), numRuns: 500 },
    );
  });

  it('under the limit, decodes as one TextDecoder over the whole stream did (property, seeded)', () => {
    fc.assert(
      fc.property(bytesArb, fc.array(fc.nat(), { maxLength: 12 }), (bytes, offsets) => {
        const whole = new TextDecoder()
          .decode(bytes)
          .split('\n')
          .map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
        if (whole[whole.length - 1] === '') whole.pop();
        expect(splitAll(1 << 20, cutAt(bytes, offsets))).toEqual(whole);
      }),
      { seed: testSeed(), numRuns: 500 },
    );
  });

  it('holds at most the limit of a longer line: 256 MiB in fresh 1 MiB reads leave the array buffers far below that', () => {
    const s = new LineSplitter(1 << 20);
    let peak = 0;
    for (let i = 0; i < 256; i++) {
      expect(s.push(Buffer.alloc(1 << 20, 0x61))).toEqual([]);
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    }
    expect(s.end()).toEqual([{ cutBytes: 256 << 20 }]);
    // Each read is garbage once past the limit; V8 collects external memory every few tens of MB.
    expect(peak).toBeLessThan(128 << 20);
  });

  it('takes a 64 MiB line in 64 KiB reads in linear time (the old splitter copied the whole line each read)', () => {
    const s = new LineSplitter(1 << 20);
    const chunk = Buffer.alloc(65536, 0x61);
    const t0 = performance.now();
    for (let i = 0; i < 1024; i++) expect(s.push(chunk)).toEqual([]);
    expect(s.push(enc('\ndone\n'))).toEqual([{ cutBytes: 64 << 20 }, 'done']);
    const ms = performance.now() - t0;
    // The quadratic one needed minutes for this; a linear scan takes a few tens of ms.
    expect(ms).toBeLessThan(2000);
  });
});
