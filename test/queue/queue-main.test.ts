// The queue process (src/queue/queue-main.ts) started as rq-mgr starts it, with --watch-stdin: when its parent goes away, it stops cleanly.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueProc, addQueue, pidAlive } from '../helpers/rq-root.js';
import { perTestRoot } from '../helpers/per-test-root.js';

const ctx = perTestRoot();

describe('queue process with --watch-stdin', () => {
  it('stops like on TERM when its stdin closes (rq-mgr killed): exit 0, script stopped, socket gone, message kept in run/', async () => {
    await addQueue(ctx.t.root, 'orphan');
    const q = (ctx.q = await QueueProc.start(ctx.t.root, 'orphan'));
    const id = await q.send({ param1: 'forever' });
    await q.waitState(id, ['run']);
    const script = Number(await fs.readFile(path.join(q.paths.state.run, id, 'pid'), 'utf8'));
    expect(pidAlive(script)).toBe(true);

    // rq-mgr holds the other end of this pipe; a KILLed rq-mgr closes it and nothing else tells the queue.
    const exited = new Promise<number | null>((r) => q.child.once('exit', (code) => r(code)));
    q.child.stdin!.end();
    expect(await exited).toBe(0);
    expect(pidAlive(script)).toBe(false);
    expect(existsSync(q.paths.sock)).toBe(false);
    expect(await fs.readdir(q.paths.state.run)).toEqual([id]);
    const log = await fs.readFile(path.join(ctx.t.root, 'log', 'queue-orphan.log'), 'utf8');
    expect(log).toContain('"why":"parent went away"');
  });
});
