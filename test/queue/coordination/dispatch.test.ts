// Dispatcher: num_workers, blocking, coalescing (all cases of spec §3.5), future due times.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { promisify } from 'node:util';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueProc, addQueue, waitFor } from '../../helpers/rq-root.js';
import { perTestRoot } from '../../helpers/per-test-root.js';

const ctx = perTestRoot();
const execFileP = promisify(execFile);

describe('blocking_params', () => {
  it('a, b, a with num_workers 3 ⇒ run, run, que until the first a ends', async () => {
    await addQueue(ctx.t.root, 'blk', { num_workers: 3, blocking_params: [2] });
    ctx.q = await QueueProc.start(ctx.t.root, 'blk');
    const a1 = await ctx.q.send({ param1: 'slow', param2: '1' });
    const b = await ctx.q.send({ param1: 'slow', param2: '1.2' });
    const a2 = await ctx.q.send({ param1: 'slow', param2: '1' });
    await ctx.q.waitState(a1, ['run']);
    await ctx.q.waitState(b, ['run']);
    expect(await ctx.q.state(a2)).toBe('que');
    await ctx.q.waitState(a1, ['done']);
    await ctx.q.waitState(a2, ['run', 'done']);
    await ctx.q.waitState(a2, ['done']);
  });
});

describe('num_workers', () => {
  it('never has more than num_workers scripts alive at once', async () => {
    const script = path.join(ctx.t.root, 'span.sh');
    // Each script records when it lives; overlapping lifetimes are what num_workers limits.
    await fs.writeFile(
      script,
      '#!/bin/bash\necho "s $EPOCHREALTIME" >> "$RQ_PARAM1"\nsleep 0.3\necho "e $EPOCHREALTIME" >> "$RQ_PARAM1"\necho "done ok" >&3\n',
      { mode: 0o755 },
    );
    await addQueue(ctx.t.root, 'nw', { script, num_workers: 2 });
    ctx.q = await QueueProc.start(ctx.t.root, 'nw');
    const spans = path.join(ctx.t.root, 'spans.log');
    for (let i = 0; i < 6; i++) await ctx.q.send({ param1: spans });
    await waitFor(async () => (await ctx.q!.cmd('num_messages')).done === 6, 'all done', 15_000);
    const events = (await fs.readFile(spans, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .map(([k, t]) => ({ k, t: Number(t) }));
    events.sort((a, b) => a.t - b.t || (a.k === 'e' ? -1 : 1));
    let live = 0;
    let max = 0;
    for (const e of events) {
      live += e.k === 's' ? 1 : -1;
      max = Math.max(max, live);
    }
    expect(events).toHaveLength(12);
    expect(max).toBe(2);
  });
});

describe('run files made ahead', () => {
  it('while every worker is busy, the message that starts next gets job/, stdio.log, history and an empty pid in que/; the one after it does not', async () => {
    const gate = path.join(ctx.t.root, 'gate');
    const script = path.join(ctx.t.root, 'gated.sh');
    // Each run waits for one line on the gate FIFO, so the test decides when a worker frees up.
    await fs.writeFile(script, `#!/bin/bash\nread x < ${gate}\necho "done ok" >&3\n`, { mode: 0o755 });
    await execFileP('mkfifo', [gate]);
    await addQueue(ctx.t.root, 'ahead', { script, num_workers: 1 });
    const pause = path.join(ctx.t.root, 'config', 'ahead.pause');
    await fs.writeFile(pause, '');
    ctx.q = await QueueProc.start(ctx.t.root, 'ahead');
    const q = ctx.q;
    const [first, next, after] = [await q.send({}), await q.send({}), await q.send({})];
    const files = async (id: string) =>
      (
        await Promise.all(
          ['job', 'job/stdio.log', 'history', 'pid'].map((f) =>
            fs.stat(path.join(q.paths.state.que, id, f)).then(
              () => f,
              () => null,
            ),
          ),
        )
      ).filter(Boolean);
    // Made on a paused queue, none has its run files yet: whatever makes them below is the dispatch.
    expect([await files(first), await files(next), await files(after)]).toEqual([[], [], []]);
    await fs.rm(pause);
    await q.waitState(first, ['run']);
    await waitFor(async () => (await files(next)).length === 4, 'the next message staged in que/');
    expect(await q.state(next)).toBe('que');
    expect(await files(after)).toEqual([]);
    // Opening the FIFO for writing waits until a run has it open for reading: the line then waits in the pipe for that run,
    // where a write with no reader (the last run gone, the next one's bash not yet at its read) would fail.
    const go = async () => {
      const h = await fs.open(gate, 'w');
      try {
        await h.write('go\n');
      } finally {
        await h.close();
      }
    };
    await go();
    await q.waitState(first, ['done']);
    // Its start used the staged files: one history, the staged stdio.log kept as the run's log.
    await q.waitState(next, ['run']);
    await waitFor(async () => (await files(after)).length === 4, 'the one after staged once the next one started');
    for (const id of [next, after]) {
      await go();
      // The staged pid named the run's script while it ran, and goes with it.
      const done = await q.waitState(id, ['done']);
      expect(await fs.readdir(path.join(ctx.t.root, done.path))).not.toContain('pid');
    }
  });
});

describe('due times', () => {
  it('a future message waits for its due time, without polling', async () => {
    await addQueue(ctx.t.root, 'due');
    ctx.q = await QueueProc.start(ctx.t.root, 'due');
    const due = Math.floor(Date.now() / 1000) + 2;
    const id = await ctx.q.send({ param1: 'done', due: String(due) });
    expect(await ctx.q.state(id)).toBe('que');
    const m = await ctx.q.waitState(id, ['done'], 5000);
    expect(Date.now()).toBeGreaterThanOrEqual(due * 1000);
    expect(m.due).toBe(due);
  });
});

describe('coalesce_params', () => {
  // param3 is the coalescing key; param1/param2 drive the fixture script.
  async function setup(parentMode: string, parentArg = '1') {
    await addQueue(ctx.t.root, 'co', { coalesce_params: [3] });
    ctx.q = await QueueProc.start(ctx.t.root, 'co');
    const blocker = await ctx.q.send({ param1: 'slow', param2: '0.5', param3: 'blocker' });
    await ctx.q.waitState(blocker, ['run']);
    const parent = await ctx.q.send({ param1: parentMode, param2: parentArg, param3: 'same' });
    const d1 = await ctx.q.send({ param1: 'done', param3: 'same', due: Math.floor(Date.now() / 1000) + 3600 });
    const d2 = await ctx.q.send({ param1: 'done', param3: 'same' });
    const other = await ctx.q.send({ param1: 'done', param3: 'other' });
    return { parent, d1, d2, other };
  }
  const full = (id: string) => `http://127.0.0.1:${ctx.t.port}/q/co/${id}`;

  it('parent done ⇒ dups done as "duplicate <parent>", whatever their due', async () => {
    const { parent, d1, d2, other } = await setup('slow');
    await ctx.q!.waitState(parent, ['run']);
    const visible = (await ctx.q!.cmd('messages', { state: 'que' })).map((e: string[]) => e[0]);
    expect(visible).not.toContain(d1);
    expect(visible).not.toContain(d2);
    expect((await ctx.q!.cmd('num_messages')).que).toBe(1);
    const pm = await ctx.q!.waitState(parent, ['done']);
    expect([...pm.dups].sort()).toEqual([full(d1), full(d2)].sort());
    for (const d of [d1, d2]) {
      const m = await ctx.q!.waitState(d, ['done']);
      expect(m.status).toBe(`done - duplicate ${full(parent)}`);
      expect(m.dup).toBe(full(parent));
    }
    expect((await ctx.q!.waitState(other, ['done'])).dup).toBeUndefined();
  });

  it('parent relayed ⇒ dups relayed too', async () => {
    const { parent, d1 } = await setup('relayed', 'http://127.0.0.1:1/q/far/1');
    await ctx.q!.waitState(parent, ['relayed']);
    expect((await ctx.q!.waitState(d1, ['relayed'])).status).toBe(`relayed - duplicate ${full(parent)}`);
  });

  it('parent err ⇒ dups go back to que; the next one runs and folds in the rest', async () => {
    const { parent, d1, d2 } = await setup('err');
    await ctx.q!.waitState(parent, ['err']);
    expect((await ctx.q!.cmd('get_message', { msg_id: parent }))[1].dups).toBeUndefined();
    const m2 = await ctx.q!.waitState(d2, ['done']);
    expect(m2.dup).toBeUndefined();
    expect(m2.status).toBe('done - done sleeping');
    // d1 is due in an hour, yet folds into d2 when d2 runs (spec §3.5: regardless of due).
    expect((await ctx.q!.waitState(d1, ['done'])).status).toBe(`done - duplicate ${full(d2)}`);
  });

  it('parent resent ⇒ dups return to que; the resent parent folds into the next one', async () => {
    const { parent, d2 } = await setup('resend1');
    const m2 = await ctx.q!.waitState(d2, ['done']);
    expect(m2.status).toBe('done - done sleeping');
    const pm = await ctx.q!.waitState(parent, ['done']);
    expect(pm.count).toBe(1);
    expect(pm.status).toBe(`done - duplicate ${full(d2)}`);
  });
});
