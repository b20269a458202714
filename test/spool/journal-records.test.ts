// The create journal's line format: what is a whole record, and what a crash or damage leaves that is not.
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type JournalRecord, encodeRecord, parseJournal } from '../../src/spool/journal-records.js';

const rec = (n: number): JournalRecord => ({
  id: `20261126.1200.00.000.${n}`,
  state: 'que',
  msg: { msg_id: `20261126.1200.00.000.${n}`, dest: 'q', param1: `p${n} ü\n"x"` } as never,
});

/** A journal line of any JSON text: its checksum, a space, the text. */
const checksummed = (json: string) => `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;

describe('journal records', () => {
  it("a record's text is the record's JSON, its msg given as the file's text or encoded here", () => {
    const r = rec(1);
    expect(encodeRecord(r)).toBe(checksummed(JSON.stringify(r)));
    expect(encodeRecord(r, JSON.stringify(r.msg))).toBe(encodeRecord(r));
    // The text given is the one kept, byte for byte: the record holds what the msg file holds.
    const spaced = JSON.stringify(r.msg).replace('{', '{ ');
    expect(encodeRecord(r, spaced)).toContain(`"msg":${spaced}}`);
    expect(parseJournal(encodeRecord(r, spaced)).records).toEqual([r]);
  });

  it('a line is a checksum in 8 hex digits, a space and the JSON; parsing gives back what was encoded', () => {
    const line = encodeRecord(rec(1));
    expect(line).toMatch(/^[0-9a-f]{8} \{.*\}\n$/);
    expect(line.split('\n')).toHaveLength(2);
    expect(parseJournal(line + encodeRecord(rec(2)))).toEqual({ records: [rec(1), rec(2)], damaged: 0 });
    expect(parseJournal('')).toEqual({ records: [], damaged: 0 });
  });

  it('a torn last line (no newline) is skipped and counted, whatever part of it survived', () => {
    const whole = encodeRecord(rec(1));
    const torn = encodeRecord(rec(2));
    for (const cut of [1, 8, 9, 20, torn.length - 2, torn.length - 1]) {
      expect(parseJournal(whole + torn.slice(0, cut)), `cut at ${cut}`).toEqual({ records: [rec(1)], damaged: 1 });
    }
  });

  it('a damaged line is skipped and counted, and the records after it still count', () => {
    const good = encodeRecord(rec(1));
    const flip = (line: string, at: number) => line.slice(0, at) + (line[at] === 'a' ? 'b' : 'a') + line.slice(at + 1);
    const damaged = [
      flip(encodeRecord(rec(2)), 30), // a byte of the JSON
      flip(encodeRecord(rec(2)), 3), // a byte of the checksum
      encodeRecord(rec(2)).replace(' ', '_'), // the separator
      `${encodeRecord(rec(2)).slice(0, 9)}{"id":"x"}\n`, // the checksum of another text
    ];
    for (const bad of damaged) expect(parseJournal(good + bad + encodeRecord(rec(3))), bad).toEqual({ records: [rec(1), rec(3)], damaged: 1 });
  });

  it('a line whose JSON checks out but is no create record (no id, another state, no msg) is not one', () => {
    const line = (v: unknown) => checksummed(JSON.stringify(v));
    for (const v of [
      { state: 'que', msg: {} },
      { id: 'x', state: 'prep', msg: {} },
      { id: 'x', state: 'que' },
      { id: 'x', state: 'que', msg: null },
      null,
      7,
    ]) {
      expect(parseJournal(line(v)), JSON.stringify(v)).toEqual({ records: [], damaged: 1 });
    }
    expect(parseJournal('\n\n' + encodeRecord(rec(1)))).toEqual({ records: [rec(1)], damaged: 0 });
  });
});
