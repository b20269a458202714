// StatsCollector's day record: the UTC day boundary decided by the clock of each event, forward and back.
import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/message/message.js';
import type { DayRecord } from '../../../src/queue/observers/day-stats.js';
import { QueueEvents } from '../../../src/queue/status/queue-events.js';
import { StatsCollector } from '../../../src/queue/observers/stats-collector.js';

const at = (iso: string) => Date.parse(iso);

function collector(start: string) {
  let now = at(start);
  const ended: string[] = [];
  const events = new QueueEvents();
  const c = new StatsCollector(
    () => now,
    (day?: DayRecord) => day && ended.push(`${day.date}:${day.created}`),
  );
  c.subscribe(events);
  const create = () => events.emit('created', { msg: { msg_id: 'x' } as Message, state: 'que' });
  return { c, ended, create, set: (iso: string) => (now = at(iso)) };
}

describe('StatsCollector day record', () => {
  it('counts into one day up to its last millisecond and starts the next at midnight UTC', () => {
    const s = collector('2026-11-25T00:00:00.000Z');
    s.create();
    s.set('2026-11-25T23:59:59.999Z');
    s.create();
    expect(s.c.record()).toMatchObject({ date: '20261125', created: 2 });
    expect(s.ended).toEqual([]);
    s.set('2026-11-26T00:00:00.000Z');
    s.create();
    expect(s.c.record()).toMatchObject({ date: '20261126', created: 1 });
    expect(s.ended).toEqual(['20261125:2']);
    expect(s.c.cumulative().created).toBe(3);
  });

  it('a clock set back to an earlier day starts a record for that day', () => {
    const s = collector('2026-11-26T08:00:00.000Z');
    s.create();
    s.set('2026-11-25T23:00:00.000Z');
    s.create();
    expect(s.c.record()).toMatchObject({ date: '20261125', created: 1 });
    expect(s.ended).toEqual(['20261126:1']);
  });

  it('asking for the record at a later day ends the one before, with no event in between', () => {
    const s = collector('2026-11-25T12:00:00.000Z');
    s.create();
    s.set('2026-11-27T00:00:01.000Z');
    expect(s.c.record()).toMatchObject({ date: '20261127', created: 0 });
    expect(s.ended).toEqual(['20261125:1']);
  });
});
