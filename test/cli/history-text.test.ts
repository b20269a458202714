// `rq history` lines: the step stays one word, the details read as words (no raw JSON), the reason loses the exit its details say.
import { describe, expect, it } from 'vitest';
import { historyText } from '../../src/cli/rq-lifecycle.js';

describe('historyText', () => {
  it('a finished run says how it exited and for how long, once', () => {
    const line = {
      at: '2026-12-02T01:00:00.000Z',
      from: 'run' as const,
      to: 'err' as const,
      actor: 'dispatcher',
      reason: 'exit 3: bad input',
      exit: { code: 3, signal: null, wall_ms: 143 },
      attempt: 1,
    };
    expect(historyText(line)).toBe('2026-12-02T01:00:00.000Z run→err dispatcher exit 3 after 0.143s, attempt 1 - bad input');
  });

  it('a create, a kill and an event', () => {
    expect(historyText({ at: 'T', from: null, to: 'que', actor: 'create' })).toBe('T create→que create');
    expect(
      historyText({ at: 'T', from: 'run', to: 'err', actor: 'dispatcher', reason: 'exit SIGKILL', exit: { code: null, signal: 'SIGKILL', wall_ms: 2100 } }),
    ).toBe('T run→err dispatcher killed by SIGKILL after 2.1s');
    expect(historyText({ at: 'T', event: 'tags', actor: 'cli:alice', add: ['green'], remove: ['blue'] })).toBe('T tags cli:alice added green, removed blue');
  });
});
