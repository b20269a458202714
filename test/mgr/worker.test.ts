// One supervised child (src/mgr/worker.ts) with a real process: a stop is final, a death is restarted.
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { type WorkerStatus, Worker } from '../../src/mgr/worker.js';
import { pidAlive, waitFor } from '../helpers/rq-root.js';
import { capturedLog } from '../helpers/captured-log.js';

/** A child that runs until it is signalled (it keeps its stdin open, as a queue process does). */
const FOREVER = ['-e', 'process.stdin.resume()'];
const POLICY = { baseDelayMs: 50, maxDelayMs: 50, fastMs: 10_000, maxFastDeaths: 10 };

const workers: Worker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop(1000);
});

function worker(): { w: Worker; told: WorkerStatus[] } {
  const told: WorkerStatus[] = [];
  const w = new Worker('w', 'queue', FOREVER, silentLogger(), POLICY, process.env, (status) => told.push(status));
  workers.push(w);
  return { w, told };
}

describe('Worker', () => {
  it('stop ends the child for good: STOPPED, told once, no restart scheduled', async () => {
    const { w, told } = worker();
    w.start();
    const pid = w.pid!;
    expect(w.status).toBe('RUNNING');
    await w.stop();
    expect(pidAlive(pid)).toBe(false);
    // A queue stopped by delete_queue, a removed scandir link or rq-mgr's shutdown must stay stopped:
    // a worker that took the stop for a death would start the queue again 50 ms later.
    expect(w.status).toBe('STOPPED');
    expect(told).toEqual(['STOPPED']);
    expect(w.child).toBeNull();
    expect(w.lastExit).toBe('signal SIGTERM');
  });

  it('a child that dies on its own is restarted (BACKOFF, then RUNNING with a new pid)', async () => {
    const { w, told } = worker();
    w.start();
    const first = w.child!;
    const died = new Promise<void>((r) => first.once('exit', () => r()));
    first.kill('SIGKILL');
    await died;
    expect(w.status).toBe('BACKOFF');
    expect(told).toEqual(['BACKOFF']);
    await waitFor(() => w.status === 'RUNNING', 'the restart after the back-off');
    expect(w.pid).not.toBe(first.pid);
    expect(w.fastDeaths).toBe(1);
  });

  it("counts its restarts (rq_queue_process_restarts_total): not the first start; a death's restart and restart() each", async () => {
    const { w } = worker();
    w.start();
    expect(w.restarts).toBe(0);
    const first = w.child!;
    first.kill('SIGKILL');
    await waitFor(() => w.status === 'RUNNING' && w.child !== first, 'the restart after the back-off');
    expect(w.restarts).toBe(1);
    await w.restart();
    expect(w.restarts).toBe(2);
    // A stop is not a restart: the count stays.
    await w.stop(1000);
    expect(w.restarts).toBe(2);
  });

  it('a child that served and then says nothing for silentMs is killed and restarted; one that keeps saying it is alive is left alone', async () => {
    // Says it serves, then a heartbeat every 50 ms (heartbeatParent's, faster), until it gets SIGUSR2: then it stops them, as a stuck loop would.
    const beating = [
      '-e',
      `process.stdin.resume(); process.send({ rq: 'ready' }); const t = setInterval(() => process.send({ rq: 'alive' }), 50); process.on('SIGUSR2', () => clearInterval(t));`,
    ];
    const told: WorkerStatus[] = [];
    const { log, lines } = capturedLog();
    const w = new Worker('[web]', 'web', beating, log, { ...POLICY, silentMs: 400 }, process.env, (status) => told.push(status));
    workers.push(w);
    w.start();
    await waitFor(() => w.ready, 'the child to say it serves');
    const first = w.child!;
    const died = new Promise<void>((r) => first.once('exit', () => r()));
    // Three times silentMs of heartbeats: left alone.
    await new Promise((r) => setTimeout(r, 1200));
    expect(w.child).toBe(first);
    // rq-mgr's own loop held up past silentMs: the heartbeats wait unread behind its next check, which judges nothing.
    const until = Date.now() + 700;
    while (Date.now() < until);
    await new Promise((r) => setTimeout(r, 200));
    expect(w.child).toBe(first);
    expect(told).toEqual([]);
    first.kill('SIGUSR2');
    await died;
    expect(first.signalCode).toBe('SIGKILL');
    expect(told).toEqual(['BACKOFF']);
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(['[web] said nothing for 0.4 s: stuck; SIGKILL and restart', 'died; restarting']);
    await waitFor(() => w.status === 'RUNNING' && w.ready && w.child !== first, 'the restart to serve');
  });

  it('a child stopped (SIGSTOP) after it served is killed and restarted too; without silentMs it is left stopped', async () => {
    const beating = ['-e', `process.stdin.resume(); process.send({ rq: 'ready' }); setInterval(() => process.send({ rq: 'alive' }), 50);`];
    const watched = new Worker('[web]', 'web', beating, silentLogger(), { ...POLICY, silentMs: 400 }, process.env);
    const unwatched = new Worker('[timers]', 'timers', beating, silentLogger(), POLICY, process.env);
    workers.push(watched, unwatched);
    for (const w of [watched, unwatched]) w.start();
    await waitFor(() => watched.ready && unwatched.ready, 'both to serve');
    const [first, other] = [watched.child!, unwatched.child!];
    const died = new Promise<void>((r) => first.once('exit', () => r()));
    for (const c of [first, other]) c.kill('SIGSTOP');
    await died;
    expect(first.signalCode).toBe('SIGKILL');
    await waitFor(() => watched.ready && watched.child !== first, 'the restart to serve');
    expect(unwatched.child).toBe(other);
    other.kill('SIGCONT');
  });
});
