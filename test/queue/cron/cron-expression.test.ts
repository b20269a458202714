// Cron expressions of a queue schedule: accepted forms and refusals.
import { describe, expect, it } from 'vitest';
import { RqError } from '../../../src/errors.js';
import { parseCron } from '../../../src/queue/cron/cron-expression.js';

describe('cron expressions', () => {
  it('accepts 5 fields, 6 with seconds, and @-shortcuts; refuses the rest naming the field', () => {
    const at = new Date(2030, 0, 1, 12, 7, 30).getTime();
    expect(parseCron('*/10 * * * *', 'f').nextAfter(at)).toBe(new Date(2030, 0, 1, 12, 10, 0).getTime());
    expect(parseCron('*/2 * * * * *', 'f').nextAfter(at)).toBe(at + 2000);
    expect(parseCron('*/2 * * * * *', 'f').latestAtOrBefore(at)).toBe(at);
    expect(parseCron('@hourly', 'f').latestAtOrBefore(at)).toBe(new Date(2030, 0, 1, 12, 0, 0).getTime());
    for (const bad of ['61 * * * *', 'every minute', '0 0 * * * * 2031']) {
      try {
        parseCron(bad, 'queues/q/config.json: schedule[0].cron');
        throw new Error(`accepted ${bad}`);
      } catch (err) {
        expect(err).toBeInstanceOf(RqError);
        expect((err as Error).message).toContain(`queues/q/config.json: schedule[0].cron: expected a cron expression`);
        expect((err as Error).message).toContain(JSON.stringify(bad));
      }
    }
  });

  it("gives croner's reason without its prefix", () => {
    expect(() => parseCron('61 * * * *', 'f')).toThrow(/received "61 \* \* \* \*": Invalid value for minute: 61$/);
  });

  it('a restricted day of month and day of week combine with OR, as in Vixie cron', () => {
    const at = new Date(2030, 0, 1, 12, 0, 0).getTime();
    // The 13th or a Friday: Friday 4 January, not the first Friday the 13th (September).
    expect(parseCron('0 0 13 * 5', 'f').nextAfter(at)).toBe(new Date(2030, 0, 4).getTime());
  });

  it('a date that never comes (30 February) has no next and no latest occurrence', () => {
    const never = parseCron('0 0 30 2 *', 'f');
    expect(never.nextAfter(Date.now())).toBeNull();
    expect(never.latestAtOrBefore(Date.now())).toBeNull();
  });
});
