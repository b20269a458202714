import { describe, expect, it } from 'vitest';
import { FrameDecoder, FrameError, MAX_FRAME_BYTES, encodeFrame } from '../../src/ipc/framing.js';

const decodeAll = (proto: 'rq1' | 'rq2', bytes: Buffer) => new FrameDecoder(proto).push(bytes).map((b) => b.toString('utf8'));

describe('encodeFrame', () => {
  it('writes magic, 8-digit byte length, space, payload', () => {
    expect(encodeFrame('rq1', '["pong"]').toString()).toBe('rq1 00000008 ["pong"]');
    expect(encodeFrame('rq2', '').toString()).toBe('rq2 00000000 ');
    expect(encodeFrame('rq1', Buffer.from([0, 255])).subarray(13)).toEqual(Buffer.from([0, 255]));
  });

  it('counts bytes, not characters, for multibyte UTF-8', () => {
    const text = 'héllo ✓ 🚀';
    const frame = encodeFrame('rq1', text);
    expect(frame.subarray(0, 13).toString()).toBe(`rq1 ${String(Buffer.byteLength(text)).padStart(8, '0')} `);
    expect(Buffer.byteLength(text)).toBeGreaterThan(text.length);
    expect(decodeAll('rq1', frame)).toEqual([text]);
  });

  it('frames the largest payload an 8-digit length carries, and refuses one byte more', () => {
    const largest = encodeFrame('rq1', Buffer.alloc(MAX_FRAME_BYTES));
    expect(largest.length).toBe(13 + MAX_FRAME_BYTES);
    expect(largest.subarray(0, 13).toString('latin1')).toBe('rq1 99999999 ');
    expect(() => encodeFrame('rq1', Buffer.alloc(MAX_FRAME_BYTES + 1))).toThrow(FrameError);
  });
});

describe('FrameDecoder', () => {
  const payloads = ['ping ', 'create_message {"dest":"q","param1":"ü→🚀"}', '', '[]'];
  const stream = Buffer.concat(payloads.map((p) => encodeFrame('rq1', p)));

  it('returns several frames from one chunk', () => {
    expect(decodeAll('rq1', stream)).toEqual(payloads);
  });

  it('reassembles frames split at every byte position', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const d = new FrameDecoder('rq1');
      const got = [...d.push(stream.subarray(0, cut)), ...d.push(stream.subarray(cut))].map((b) => b.toString('utf8'));
      expect(got, `cut at ${cut}`).toEqual(payloads);
      expect(d.pending()).toBe(0);
    }
  });

  it('reassembles frames fed one byte at a time', () => {
    const d = new FrameDecoder('rq1');
    const got: string[] = [];
    for (const byte of stream) got.push(...d.push(Buffer.from([byte])).map((b) => b.toString('utf8')));
    expect(got).toEqual(payloads);
  });

  it('keeps a partial payload until the rest arrives', () => {
    const d = new FrameDecoder('rq2');
    const frame = encodeFrame('rq2', '["get_timers",null]');
    expect(d.push(frame.subarray(0, 15))).toEqual([]);
    expect(d.pending()).toBe(2);
    expect(d.push(frame.subarray(15)).map(String)).toEqual(['["get_timers",null]']);
  });

  it('rejects a bad magic, naming what it saw', () => {
    expect(() => new FrameDecoder('rq1').push(Buffer.from('GET / HTTP/1.1\r\n'))).toThrow(/bad frame magic "GET ", expected "rq1 "/);
    // The other protocol's magic is wrong too.
    expect(() => new FrameDecoder('rq1').push(encodeFrame('rq2', 'x'))).toThrow(FrameError);
    // Detected from the first wrong byte, without waiting for a whole header.
    expect(() => new FrameDecoder('rq1').push(Buffer.from('x'))).toThrow(/bad frame magic/);
  });

  it('rejects a non-digit length', () => {
    expect(() => new FrameDecoder('rq1').push(Buffer.from('rq1 0000001a hello'))).toThrow(/bad frame length "0000001a", expected 8 decimal digits/);
    expect(() => new FrameDecoder('rq1').push(Buffer.from('rq1 -0000001 x'))).toThrow(/bad frame length/);
  });

  it('rejects a missing space after the length', () => {
    expect(() => new FrameDecoder('rq1').push(Buffer.from('rq1 00000005xhello'))).toThrow(/missing space after frame length, found "x"/);
  });

  it('rejects a length over maxBytes before reading the payload', () => {
    expect(() => new FrameDecoder('rq1', 10).push(Buffer.from('rq1 00000011 '))).toThrow(/frame of 11 bytes is over the 10-byte limit/);
    expect(new FrameDecoder('rq1', 10).push(encodeFrame('rq1', '0123456789')).map(String)).toEqual(['0123456789']);
  });

  it('hands over the frames that were complete before the bad bytes', () => {
    const bytes = Buffer.concat([encodeFrame('rq1', 'a'), encodeFrame('rq1', 'b'), Buffer.from('junk')]);
    try {
      new FrameDecoder('rq1').push(bytes);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(FrameError);
      expect((err as FrameError).frames.map(String)).toEqual(['a', 'b']);
    }
  });
});
