// StatsCollector alone on its events: the UTC day boundary decided by the clock of each event, forward and back; the per-minute ring, what each move and finish counts, waits, and when it tells its owner.
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
  const move = (id: string, from: string, to: string, actor = 'queue', reason?: string) => events.emit('moved', { id, from, to, actor, reason } as never);
  return { c, ended, events, create, move, set: (iso: string) => (now = at(iso)), now: () => now };
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

describe('StatsCollector live figures', () => {
  it('counts done and err per minute of the last hour, oldest first, forgetting a slot an hour old', () => {
    const s = collector('2026-11-25T10:00:30.000Z');
    s.move('a', 'run', 'done');
    s.move('b', 'run', 'err');
    s.set('2026-11-25T10:02:00.000Z');
    s.move('c', 'run', 'done');
    s.move('d', 'run', 'done');
    const series = s.c.perMinute();
    expect(series.done.length).toBe(60);
    expect(series.done.slice(-3)).toEqual([1, 0, 2]);
    expect(series.err.slice(-3)).toEqual([1, 0, 0]);
    // An hour on, 10:00's slot is 11:00's: its counts start again.
    s.set('2026-11-25T11:00:10.000Z');
    s.move('e', 'run', 'err');
    expect(s.c.perMinute().done.reduce((a, b) => a + b, 0)).toBe(2);
    expect(s.c.perMinute().err.slice(-1)).toEqual([1]);
    const later = s.c.perMinute(at('2026-11-25T13:00:00.000Z'));
    expect([...later.done, ...later.err].every((n) => n === 0)).toBe(true);
  });

  it('a return to the que is when the message entered it; else its id time', () => {
    const s = collector('2026-11-25T10:00:00.000Z');
    const msg = { msg_id: '20261125.0900.00.000.1' } as Message;
    expect(s.c.enteredAt(msg)).toBe(at('2026-11-25T09:00:00.000Z'));
    s.move(msg.msg_id, 'run', 'que', 'retry');
    expect(s.c.enteredAt(msg)).toBe(s.now());
    expect(s.c.record()).toMatchObject({ retries: 1, interrupts: 0, resends: 0 });
    s.move('r', 'run', 'que', 'recovery');
    s.move('s', 'run', 'que', 'queue', 'resend 0');
    expect(s.c.record()).toMatchObject({ retries: 1, interrupts: 1, resends: 1 });
    expect(s.c.cumulative()).toMatchObject({ retries: 1, interrupts: 1, resends: 1 });
    // Back from err (by recovery too, or with a resend reason), or another reason from run, is none of these.
    s.move('t', 'err', 'que', 'queue', 'resend');
    s.move('u', 'err', 'que', 'recovery');
    s.move('v', 'run', 'que', 'queue', 'stopped');
    expect(s.c.record()).toMatchObject({ retries: 1, interrupts: 1, resends: 1 });
  });

  it("restore takes the loaded day only when it is today's, and the totals always", () => {
    const s = collector('2026-11-25T10:00:00.000Z');
    const totals = s.c.cumulative();
    s.c.restore({ ...s.c.record(), date: '20261124', created: 7 }, { ...totals, created: 9 });
    expect(s.c.record().created).toBe(0);
    expect(s.c.cumulative().created).toBe(9);
    s.c.restore({ ...s.c.record(), created: 5 }, totals);
    expect(s.c.record().created).toBe(5);
  });

  it('tells its owner once per flush that something changed, and again after a failed flush', () => {
    let changes = 0;
    const events = new QueueEvents();
    const c = new StatsCollector(
      () => at('2026-11-25T10:00:00.000Z'),
      (day) => day === undefined && changes++,
    );
    c.subscribe(events);
    expect(c.takeDirty()).toBe(false);
    events.emit('created', { msg: { msg_id: 'x' } as Message, state: 'que' });
    events.emit('created', { msg: { msg_id: 'y' } as Message, state: 'que' });
    expect(changes).toBe(1);
    expect([c.takeDirty(), c.takeDirty()]).toEqual([true, false]);
    c.markDirty();
    expect(c.takeDirty()).toBe(true);
    events.emit('created', { msg: { msg_id: 'z' } as Message, state: 'prep' });
    expect([changes, c.record().created]).toEqual([1, 2]);
  });

  it('a finished run counts its time, CPU, peak memory and failure kind; fatal and success count no failure', () => {
    const s = collector('2026-11-25T10:00:00.000Z');
    const finish = (failure: string | undefined, usage?: object) =>
      s.events.emit('finished', { msg: { msg_id: 'x' } as Message, outcome: { failure }, code: 0, signal: null, ms: 2000, usage } as never);
    finish(undefined, { cpu_user_ms: 300, cpu_system_ms: 200, memory_peak_bytes: 3 * 1024 * 1024 });
    finish('timeout', { cpu_user_ms: 1000, cpu_system_ms: 500 });
    finish('stalled', { cpu_user_ms: 0, cpu_system_ms: 0, memory_peak_bytes: 1024 * 1024 });
    finish('oom');
    finish('fatal');
    const day = s.c.record();
    expect(day).toMatchObject({ failures: 3, timeouts: 1, stalls: 1, ooms: 1 });
    expect(day.run).toMatchObject({ count: 5, mean: 2 });
    expect(day.cpu).toMatchObject({ count: 3, min: 0, max: 1.5 });
    expect(day.memory).toEqual({ count: 2, sum: 4 * 1024 * 1024, max: 3 * 1024 * 1024 });
    const totals = s.c.cumulative();
    expect(totals.failures).toEqual({ timeout: 1, stalled: 1, oom: 1 });
    expect([totals.run.count, totals.run_cpu.count, totals.run_cpu.sum, totals.run_memory.count]).toEqual([5, 3, 2, 2]);
  });

  it('a wait runs from the later of the due and the entry; an err moved within err counts once; a removed message forgets its entry', () => {
    const s = collector('2026-11-25T10:00:00.000Z');
    const start = (msg: object) => s.events.emit('started', { msg: msg as Message, pid: 1, script: 's' });
    s.move('a', 'run', 'que', 'retry');
    s.set('2026-11-25T10:00:10.000Z');
    start({ msg_id: 'a', due: at('2026-11-25T10:00:04.000Z') / 1000 });
    start({ msg_id: '20261125.0959.50.000.1', due: 'x' });
    expect(s.c.record().wait).toMatchObject({ count: 2, min: 6, max: 20 });
    s.move('b', 'run', 'err');
    s.move('b', 'err', 'err');
    expect([s.c.record().err, s.c.cumulative().finished.err.failed]).toEqual([1, 1]);
    s.move('c', 'run', 'que', 'retry');
    s.set('2026-11-25T10:00:30.000Z');
    s.events.emit('removed', { id: 'c', state: 'que' });
    expect(s.c.enteredAt({ msg_id: 'c' } as Message)).toBe(s.now());
    expect(s.c.cumulative()).toMatchObject({ retries: 2, resends: 0, interrupts: 0 });
  });

  it('keeps when a message entered the que while it is queued or running, and forgets it when it leaves them', () => {
    const s = collector('2026-11-25T10:00:00.000Z');
    const a = { msg_id: '20261125.0950.00.000.1' } as Message;
    const b = { msg_id: '20261125.0950.00.000.2' } as Message;
    const made = at('2026-11-25T09:50:00.000Z');
    for (const m of [a, b]) s.move(m.msg_id, 'run', 'que', 'retry');
    s.set('2026-11-25T10:00:05.000Z');
    s.move(a.msg_id, 'que', 'run');
    expect(s.c.enteredAt(a)).toBe(at('2026-11-25T10:00:00.000Z'));
    s.move(a.msg_id, 'run', 'done');
    s.move(b.msg_id, 'que', 'err');
    expect([s.c.enteredAt(a), s.c.enteredAt(b)]).toEqual([made, made]);
    // From prep is a create.
    s.move('p', 'prep', 'que');
    expect([s.c.record().created, s.c.cumulative().created]).toEqual([1, 1]);
  });
});
