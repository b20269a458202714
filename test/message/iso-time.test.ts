// isoTime: a message's time as ISO 8601, and null for a number no date holds, so a page or a listing shows the number instead of failing.
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/message/iso-time.js';
import { utcTime } from '../../src/web/views/message-table-view.js';
import { MAX_EPOCH_SECONDS } from '../../src/message/job-fields.js';

describe('isoTime', () => {
  it('gives the ISO text of every time a message may hold, up to the end of year 9999', () => {
    expect(isoTime(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoTime(MAX_EPOCH_SECONDS * 1000)).toBe('9999-12-31T23:59:59.000Z');
  });

  it('is null for a number beyond what a date can hold, and for NaN', () => {
    expect(isoTime(1e300 * 1000)).toBeNull();
    expect(isoTime(8.64e15 + 1)).toBeNull();
    expect(isoTime(Number.NaN)).toBeNull();
  });

  it('lets a page show such a due as its number, where it showed a 500', () => {
    expect(utcTime(1e300 * 1000).value).toBe('1e+300');
    expect(utcTime(MAX_EPOCH_SECONDS * 1000).value).toBe('<time datetime="9999-12-31T23:59:59.000Z">9999-12-31 23:59:59</time>');
  });
});
