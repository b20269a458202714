// kill -9 of a real queue process during create_messages batches and journal checkpoints: every message of an acknowledged batch there once with its fields, none twice, none nobody sent.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueClient } from '../../../src/ipc/queue-client.js';
import { STATES } from '../../../src/message/states.js';
import { QueueProc, addQueue } from '../../helpers/rq-root.js';
import { perTestRoot } from '../../helpers/per-test-root.js';
import { readQueMarkers } from '../../helpers/que-markers.js';
import { type SeededRandom, seededRandom } from '../../helpers/seeded-random.mjs';

const ctx = perTestRoot();
// The issue's proof is RQ_CHAOS_ROUNDS=20 RQ_BULK_BATCH=10000; the defaults (one round of each kind of kill) keep CI under a minute on two cores.
const ROUNDS = Number(process.env.RQ_CHAOS_ROUNDS ?? 4);
const BATCH = Number(process.env.RQ_BULK_BATCH ?? 800);
const CLIENTS = 3;
// A client that sent this many batches without the kill's event coming fails the round instead of filling the disk.
const MAX_BATCHES = 12;
const FIELDS = ['dest', 'param1', 'param2', 'param3', 'param4'] as const;
const KILLS = ['acks', 'mid-batch', 'two-segments', 'segment-deleted'] as const;
type Kill = (typeof KILLS)[number];

interface Sent {
  /** marker (param1) → the fields sent, for every message sent, answered or not. */
  tried: Map<string, Record<string, string>>;
  /** marker → short id, for the messages answered `ok` in a batch answered `ok`. */
  acked: Map<string, string>;
}

/** Deterministic fields from the marker: quotes, a backslash, a newline and non-ASCII, so a torn or re-encoded msg shows. */
function fieldsOf(dest: string, marker: string, i: number): Record<string, string> {
  const f: Record<string, string> = { dest, param1: marker, param2: `"${marker}" é\\\n✓` };
  if (i % 3 === 0) f.param3 = `three-${i}`;
  return f;
}

/** One connection per batch, `clients` in parallel, each sending batches in turn until its socket fails (the kill). */
function sendUntilKilled(sock: string, name: string, tag: string, sent: Sent, clients: number, maxBatches: number, onAck: () => void): Promise<void>[] {
  return Array.from({ length: clients }, async (_, c) => {
    for (let b = 0; b < maxBatches; b++) {
      const batch = Array.from({ length: BATCH }, (_, i) => fieldsOf(name, `${tag}.${c}.${b}.${i}`, i));
      for (const f of batch) sent.tried.set(f.param1, f);
      let r: Awaited<ReturnType<QueueClient['createMany']>>;
      try {
        r = await QueueClient.oneShot(sock, { timeoutMs: 120_000 }).createMany(batch);
      } catch {
        return;
      }
      if (!r.ok) throw new Error(`batch ${tag}.${c}.${b} refused: ${r.text}`);
      r.value.forEach((one, i) => one.ok && sent.acked.set(batch[i].param1, one.value.split('/').pop()!));
      onAck();
    }
  });
}

/** Calls `on(fresh)` for each message dir appearing in que/, and `onSegment(live, deleted)` for each journal segment first written or deleted. */
function watchSpool(q: QueueProc, on: { que: (seen: number) => void; segment: (live: number, deleted: boolean) => void }): () => void {
  const seen = new Set<string>();
  const que = fs.watch(q.paths.state.que, (_ev, f) => {
    if (f && /^\d/.test(f) && !seen.has(f)) on.que(seen.add(f).size);
  });
  // A segment is made once (open) and deleted once, never renamed: its first event is its creation, its second
  // its deletion (a checkpoint that empties it for the next records changes it, as a write does). Judged by the order of events, not by looking at the disk when one is handled: a busy test
  // process may handle a creation after the checkpoint deleted the file, and then never see two live at once.
  // Only segments written to count as live: a checkpoint may open the next one ahead, empty.
  const made = new Set<string>();
  const written = new Set<string>();
  const journal = fs.watch(q.paths.journalDir, (ev, f) => {
    if (!f || !/^\d{12}\.log$/.test(f)) return;
    if (ev === 'change') {
      if (made.has(f) && !written.has(f)) on.segment(written.add(f).size, false);
    } else if (!made.has(f)) made.add(f);
    else if (written.delete(f)) on.segment(written.size, true);
  });
  return () => {
    que.close();
    journal.close();
  };
}

/** A paused queue (its creates stay in que/) with its journal dir made ahead, so it can be watched from the start. */
async function startPaused(name: string): Promise<QueueProc> {
  await addQueue(ctx.t.root, name);
  await fsp.writeFile(path.join(ctx.t.root, 'config', `${name}.pause`), '');
  const q = await QueueProc.start(ctx.t.root, name);
  await fsp.mkdir(q.paths.journalDir, { recursive: true });
  return q;
}

/** After the restart: acked messages once each, as sent and under their acked id; unacked at most once; no temp dir, no journal; counts as on disk. */
async function checkAfterRestart(q: QueueProc, sent: Sent, rng: SeededRandom, what: string): Promise<void> {
  const { byMarker, doubled } = await readQueMarkers(q.paths.state.que);
  const problems: string[] = doubled.map((m) => `${m} made twice`);
  for (const [marker, id] of sent.acked) {
    const got = byMarker.get(marker)?.id;
    if (got !== id) problems.push(`acked ${marker} (${id}) ${got ? `found as ${got}` : 'missing'}`);
  }
  for (const [marker, { id, msg }] of byMarker) {
    const fields = sent.tried.get(marker);
    if (!fields) problems.push(`${marker} (${id}) nobody sent`);
    else if (FIELDS.some((k) => msg[k] !== fields[k])) problems.push(`${marker} (${id}) stored ${JSON.stringify(msg)}`);
  }
  // RQ_BULK_VERBOSE=1 says where each kill landed, for a long run's record.
  if (process.env.RQ_BULK_VERBOSE) console.info(`${what}: acked ${sent.acked.size} sent ${sent.tried.size} on disk ${byMarker.size}`);
  const why = `${what}, ${sent.acked.size} acked of ${sent.tried.size} sent (${rng.replay})`;
  expect(problems.slice(0, 10), why).toEqual([]);
  expect(
    (await fsp.readdir(q.paths.state.prep)).filter((n) => n.startsWith('_')),
    why,
  ).toEqual([]);
  // The restart's replay deleted every segment, and nothing was created since.
  expect(await fsp.readdir(q.paths.journalDir), why).toEqual([]);
  const zeros = Object.fromEntries(STATES.map((s) => [s, 0]));
  expect(await q.cmd('num_messages'), why).toEqual({ ...zeros, que: byMarker.size + doubled.length });
}

/** Stops the round's queue and removes it, so later rounds restart no deep que. */
async function retire(q: QueueProc): Promise<void> {
  await q.stop();
  ctx.q = undefined;
  await fsp.rm(q.paths.dir, { recursive: true, force: true });
}

describe('create_messages under kill -9', () => {
  it(
    `${ROUNDS} rounds of ${CLIENTS} clients sending batches of ${BATCH}, killed after acks, mid-batch or in a checkpoint`,
    // A bound on a hang, not on speed: 4 rounds take 30 s alone and 80 s beside the whole suite on two cores.
    { timeout: 60_000 + ROUNDS * BATCH * 25 },
    async () => {
      const rng = seededRandom();
      const first = rng.int(KILLS.length);
      for (let round = 0; round < ROUNDS; round++) {
        const name = `bulk${round}`;
        // Drawn before anything runs, so a replayed seed makes the same choices whatever the timing.
        const kill: Kill = round < KILLS.length ? KILLS[(first + round) % KILLS.length] : rng.pick(KILLS);
        const at = kill === 'acks' ? 1 + rng.int(CLIENTS) : kill === 'mid-batch' ? 1 + rng.int(CLIENTS * BATCH) : 1 + rng.int(2);
        const what = `round ${round}: kill at ${kill} #${at}`;
        let q = (ctx.q = await startPaused(name));
        const sent: Sent = { tried: new Map(), acked: new Map() };
        let killed: Promise<void> | undefined;
        let fire!: () => void;
        const fired = new Promise<void>((r) => (fire = r));
        // Sent from inside the event's callback: nothing the test does comes between the event and the kill.
        const killWhen = (hit: boolean) => {
          if (!hit || killed) return;
          killed = q.kill9();
          fire();
        };
        let acks = 0;
        let twos = 0;
        let deletes = 0;
        const unwatch = watchSpool(q, {
          que: (seen) => killWhen(kill === 'mid-batch' && seen >= at),
          segment: (live, deleted) =>
            killWhen((kill === 'two-segments' && live >= 2 && ++twos >= at) || (kill === 'segment-deleted' && deleted && ++deletes >= at)),
        });
        const work = sendUntilKilled(q.paths.sock, name, `${round}`, sent, CLIENTS, MAX_BATCHES, () => killWhen(kill === 'acks' && ++acks >= at));
        const stopped = Promise.all(work).then(() => {
          throw new Error(`${what}: every client stopped before the kill (${rng.replay})`);
        });
        await Promise.race([fired, stopped]);
        await killed;
        await Promise.all(work);
        unwatch();
        q = ctx.q = await QueueProc.start(ctx.t.root, name);
        await checkAfterRestart(q, sent, rng, what);
        await retire(q);
      }
    },
  );

  it(
    `killed between the last rename of a batch of ${BATCH} and its ok: each message there once at most, all of it when acked`,
    { timeout: 60_000 + BATCH * 6 },
    async () => {
      const rng = seededRandom();
      const q = (ctx.q = await startPaused('last'));
      const sent: Sent = { tried: new Map(), acked: new Map() };
      let killed: Promise<void> | undefined;
      const killNow = () => (killed ??= q.kill9());
      // The batch's dirs are renamed into que/ before its journal records are synced and answered: the last one's event is as close to the ok as events get.
      const unwatch = watchSpool(q, { que: (seen) => seen >= BATCH && killNow(), segment: () => undefined });
      const [work] = sendUntilKilled(q.paths.sock, 'last', 'last', sent, 1, 1, () => undefined);
      // Should inotify drop an event, the kill follows the reply instead of never coming.
      await work.then(killNow);
      await killed;
      unwatch();
      ctx.q = await QueueProc.start(ctx.t.root, 'last');
      await checkAfterRestart(ctx.q, sent, rng, `last rename (${sent.acked.size ? 'after' : 'before'} the ok)`);
      if (process.env.RQ_BULK_VERBOSE) console.info(`last-rename kill landed ${sent.acked.size ? 'after' : 'before'} the ok`);
    },
  );
});
