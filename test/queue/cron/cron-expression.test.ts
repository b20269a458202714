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
});
