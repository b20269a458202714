// Counting a multipart body's parts on the wire, wherever the chunks are cut: how a part the parser skips in silence is seen.
import { describe, expect, it } from 'vitest';
import { DelimiterCount, boundaryOf } from '../../src/web/multipart-parts.js';

const B = 'XyZ-7';
const body = [
  `preamble\r\n--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n`,
  `--${B}\r\n\r\nheaderless\r\n`,
  `--${B}\r\nContent-Disposition: form-data; name="c"\r\n\r\nnot at a line start, --${B} is no delimiter\r\n`,
  `--${B}--\r\nepilogue`,
].join('');

function count(chunks: Buffer[]): number {
  const c = new DelimiterCount(B);
  for (const ch of chunks) c.push(ch);
  return c.parts();
}

describe('DelimiterCount', () => {
  it('counts the parts sent (a delimiter at the very start too), the closing delimiter left out', () => {
    expect(count([Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--${B}--\r\n`)])).toBe(1);
    expect(count([Buffer.from(`--${B}--\r\n`)])).toBe(0);
    expect(count([Buffer.from('')])).toBe(0);
  });

  it('finds the same count wherever the body is cut into two or three chunks', () => {
    const whole = Buffer.from(body);
    const expected = count([whole]);
    expect(expected).toBe(3);
    for (let i = 0; i <= whole.length; i++) {
      expect(count([whole.subarray(0, i), whole.subarray(i)]), `cut at ${i}`).toBe(expected);
      const j = Math.min(whole.length, i + 3);
      expect(count([whole.subarray(0, i), whole.subarray(i, j), whole.subarray(j)]), `cut at ${i} and ${j}`).toBe(expected);
    }
    expect(count([...whole].map((b) => Buffer.from([b])))).toBe(expected);
  });
});

describe('boundaryOf', () => {
  it('reads the boundary plain or quoted, and nothing from a type without one', () => {
    expect(boundaryOf(`multipart/form-data; boundary=${B}`)).toBe(B);
    expect(boundaryOf('multipart/form-data; charset=utf-8; BOUNDARY="a b;c"')).toBe('a b;c');
    expect(boundaryOf('multipart/form-data')).toBeNull();
    expect(boundaryOf(undefined)).toBeNull();
  });
});
