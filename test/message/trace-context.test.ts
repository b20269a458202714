// W3C Trace Context on a message: traceparent and tracestate checked as level 1 writes them, the pair taken whole from one source, the create's refusals.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseCreate } from '../../src/message/message.js';
import {
  MAX_TRACESTATE,
  TRACEPARENT_EXPECTED,
  TRACESTATE_EXPECTED,
  readTraceparent,
  readTracestate,
  traceFrom,
  traceParentOf,
  traceparentFor,
  withoutTrace,
} from '../../src/message/trace-context.js';
import { testSeed } from '../helpers/seeded-random.mjs';

const refuse = (field: string, expected: string, received: unknown): Error => new Error(`${field} | ${expected} | ${JSON.stringify(received)}`);
const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('not refused');
};

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TP = `00-${TRACE_ID}-${PARENT_ID}-01`;
const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
const notZero = (n: number) => hex(n).filter((h) => !/^0+$/.test(h));

describe('readTraceparent', () => {
  it('takes every version-00 traceparent: ids not all zeros, any flags', () => {
    fc.assert(
      fc.property(notZero(32), notZero(16), hex(2), (t, p, f) => {
        const v = `00-${t}-${p}-${f}`;
        expect(readTraceparent(v, refuse)).toBe(v);
      }),
      { seed: testSeed(), numRuns: 300 },
    );
  });

  it('takes a later version as given, fields after the four of 00 kept for the script', () => {
    for (const v of [`01-${TRACE_ID}-${PARENT_ID}-01`, `cc-${TRACE_ID}-${PARENT_ID}-09-what-the-future-adds`, `fe-${TRACE_ID}-${PARENT_ID}-00-`])
      expect(readTraceparent(v, refuse)).toBe(v);
  });

  it.each([
    [`00-${'0'.repeat(32)}-${PARENT_ID}-01`, 'its trace id is all zeros'],
    [`00-${TRACE_ID}-${'0'.repeat(16)}-01`, 'its parent id is all zeros'],
    [`ff-${TRACE_ID}-${PARENT_ID}-01`, 'version ff is invalid'],
    [TP.toUpperCase(), 'its hex is uppercase'],
    [`00-${TRACE_ID}-${PARENT_ID}-01-extra`, '61 characters, not 55'],
    [`00-${TRACE_ID}-${PARENT_ID}-1`, '54 characters, not 55'],
    [`00-${TRACE_ID}-${PARENT_ID}_01`, 'not of that form'],
    [`00-${TRACE_ID.slice(1)}g-${PARENT_ID}-01`, 'not of that form'],
    ['', '0 characters, not 55'],
    [`cc-${TRACE_ID}-${PARENT_ID}-01-${'a'.repeat(500)}`, '556 characters, more than 512'],
  ])('refuses %j: %s', (v, why) => {
    expect(refusal(() => readTraceparent(v, refuse))).toBe(`traceparent | ${TRACEPARENT_EXPECTED} (this one: ${why}) | ${JSON.stringify(v)}`);
  });

  it('refuses what is no text, under the field name asked', () => {
    expect(refusal(() => readTraceparent(42, refuse, 'TRACEPARENT'))).toBe(`TRACEPARENT | ${TRACEPARENT_EXPECTED} | 42`);
  });

  it('refuses any traceparent with one character changed to one outside lowercase hex', () => {
    fc.assert(
      fc.property(fc.nat(54), fc.constantFrom('g', 'G', 'A', 'z', ' ', '_', '.', 'é'), (at, c) => {
        if (TP[at] === '-') return;
        expect(() => readTraceparent(TP.slice(0, at) + c + TP.slice(at + 1), refuse)).toThrow(/^traceparent \| /);
      }),
      { seed: testSeed(), numRuns: 300 },
    );
  });
});

const lcalpha = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz');
const keyChars = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789_-*/'), maxLength: 20 });
const simpleKey = fc.tuple(lcalpha, keyChars).map(([a, b]) => a + b);
const tenantKey = fc
  .tuple(fc.constantFrom(...'abc123'), keyChars, lcalpha, fc.string({ unit: fc.constantFrom(...'abc09_-*/'), maxLength: 13 }))
  .map(([a, b, c, d]) => `${a}${b}@${c}${d}`);
/** Printable ASCII but `,` and `=`; a value does not end in a space. */
const value = fc
  .string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((n) => String.fromCharCode(n)), minLength: 1, maxLength: 30 })
  .map((s) => s.replace(/[,=]/g, 'x').replace(/ +$/, '') || 'v');

describe('readTracestate', () => {
  it('takes up to 32 unique key=value members, optional whitespace around commas, empty members', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.oneof(simpleKey, tenantKey), value), { minLength: 1, maxLength: 32, selector: ([k]) => k }),
        fc.constantFrom(',', ', ', ' ,\t', ',,'),
        (members, sep) => {
          const v = members.map(([k, val]) => `${k}=${val}`).join(sep);
          fc.pre(v.length <= MAX_TRACESTATE);
          expect(readTracestate(v, refuse)).toBe(v);
        },
      ),
      { seed: testSeed(), numRuns: 300 },
    );
  });

  it.each([
    ['Congo=t61', 'member 1 "Congo=t61": a key of lowercase a-z 0-9 _ - * / (tenant@system for a multi-tenant one) then ='],
    ['1abc=x', 'member 1 "1abc=x": a key of lowercase a-z 0-9 _ - * / (tenant@system for a multi-tenant one) then ='],
    ['a=1,novalue', 'member 2 "novalue": a key of lowercase a-z 0-9 _ - * / (tenant@system for a multi-tenant one) then ='],
    ['t@Sys=1', 'member 1 "t@Sys=1": a key of lowercase a-z 0-9 _ - * / (tenant@system for a multi-tenant one) then ='],
    ['a=', 'member 1 "a=": a value of 1-256 printable ASCII characters, no comma or =, not ending in a space'],
    ['a=b=c', 'member 1 "a=b=c": a value of 1-256 printable ASCII characters, no comma or =, not ending in a space'],
    ['a=caf\u00e9', 'member 1 "a=café": a value of 1-256 printable ASCII characters, no comma or =, not ending in a space'],
    ['a=1,b=2,a=3', 'member 3: the key "a" twice'],
    [Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','), '33 members'],
    [`a=${'v'.repeat(MAX_TRACESTATE)}`, '514 characters'],
  ])('refuses %j: %s', (v, why) => {
    expect(refusal(() => readTracestate(v, refuse))).toBe(`tracestate | ${TRACESTATE_EXPECTED} (this one: ${why}) | ${JSON.stringify(v)}`);
  });
});

describe('a create', () => {
  it('keeps the pair as given, and a message without it gets neither key', () => {
    expect(normaliseCreate({ dest: 'q', traceparent: TP, tracestate: 'congo=t61rcWkgMzE' })).toMatchObject({
      traceparent: TP,
      tracestate: 'congo=t61rcWkgMzE',
    });
    const plain = normaliseCreate({ dest: 'q', traceparent: '', tracestate: null });
    expect(Object.keys(plain)).toEqual(['dest']);
  });

  it('refuses through the catalogue, naming the field, what it expects and what it got', () => {
    let err: unknown;
    try {
      normaliseCreate({ dest: 'q', traceparent: 'nope' });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'RQ_ERR_INVALID_FIELD', status: 400 });
    expect((err as Error).message).toBe(`traceparent: expected ${TRACEPARENT_EXPECTED} (this one: 4 characters, not 55), received "nope"`);
  });

  it('refuses a tracestate without a traceparent: it holds vendor data about the trace one names', () => {
    expect(refusal(() => normaliseCreate({ dest: 'q', tracestate: 'a=1' }))).toBe(
      'tracestate: expected a traceparent with it (a tracestate belongs to the trace a traceparent names), received "a=1"',
    );
  });
});

describe('traceFrom', () => {
  const ambient = { traceparent: `01-${TRACE_ID}-${PARENT_ID}-00`, tracestate: 'env=1' };

  it('takes the explicit pair whole when it has either field, never mixing in the ambient one', () => {
    expect(traceFrom({ traceparent: TP }, () => ambient)).toEqual({ traceparent: TP });
    expect(traceFrom({ tracestate: 'a=1', traceparent: null }, () => ambient)).toEqual({ tracestate: 'a=1' });
  });

  it('takes the ambient pair, read only then, when the explicit source has none', () => {
    let reads = 0;
    const lazy = () => (reads++, ambient);
    const fields = { traceparent: '', param1: 'x' };
    expect(traceFrom(fields, lazy)).toEqual(ambient);
    expect(reads).toBe(1);
    traceFrom({ traceparent: TP }, lazy);
    expect(reads).toBe(1);
    expect(traceFrom({}, () => ({ traceparent: undefined }))).toEqual({});
  });

  it('withoutTrace copies the rest', () => {
    const fields = { dest: 'q', ...ambient };
    expect(withoutTrace(fields)).toEqual({ dest: 'q' });
    expect(fields.traceparent).toBe(ambient.traceparent);
  });
});

describe('a traceparent as a tracer takes it', () => {
  it("splits a checked one into trace id, parent id and flags, a later version's extra fields left", () => {
    expect(traceParentOf(TP)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, flags: 1 });
    expect(traceParentOf(`cc-${TRACE_ID}-${PARENT_ID}-08-what-comes`)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, flags: 8 });
  });

  it('writes version 00 back, flags as two hex digits, and every one it writes is a traceparent', () => {
    expect(traceparentFor(TRACE_ID, PARENT_ID, 1)).toBe(TP);
    fc.assert(
      fc.property(notZero(32), notZero(16), fc.integer({ min: 0, max: 255 }), (traceId, spanId, flags) => {
        const tp = traceparentFor(traceId, spanId, flags);
        expect(readTraceparent(tp, refuse)).toBe(tp);
        expect(traceParentOf(tp)).toEqual({ traceId, parentId: spanId, flags });
      }),
      { seed: testSeed() },
    );
  });
});
