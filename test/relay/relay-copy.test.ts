// relayCopy at its edges: fields that are null or absent are not sent, the trace context is (the run's own first), and a count that is no number counts as 0.
import { describe, expect, it } from 'vitest';
import { relayCopy } from '../../src/relay/relay-copy.js';

describe('relayCopy edges', () => {
  it('leaves out null and undefined fields, keeps empty texts and zeros', () => {
    expect(relayCopy({ dest: 'd', src: null, param1: undefined, param2: '', max_count: 0, tags: null })).toStrictEqual({
      dest: 'd',
      param2: '',
      max_count: 0,
      count: 1,
      _method: 'prep',
    });
  });

  it('carries the trace context, so the far run continues the trace', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect(relayCopy({ dest: 'd', traceparent, tracestate: 'congo=t61' })).toMatchObject({ traceparent, tracestate: 'congo=t61' });
    expect(relayCopy({ dest: 'd' })).not.toHaveProperty('traceparent');
  });

  it("sends the run's own trace context in place of the message's, whole: the hop's span when rq exports spans", () => {
    const msg = { dest: 'd', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'congo=t61' };
    const hop = '00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01';
    expect(relayCopy(msg, { traceparent: hop, tracestate: 'congo=t61' })).toMatchObject({ traceparent: hop, tracestate: 'congo=t61' });
    expect(relayCopy(msg, { traceparent: hop })).not.toHaveProperty('tracestate');
    expect(relayCopy(msg, {})).toMatchObject({ traceparent: msg.traceparent, tracestate: 'congo=t61' });
  });

  it('counts a numeric text, and anything else as 0', () => {
    expect(relayCopy({ count: '4' }).count).toBe(5);
    expect(relayCopy({ count: 'many' }).count).toBe(1);
    expect(relayCopy({ count: null }).count).toBe(1);
  });
});
