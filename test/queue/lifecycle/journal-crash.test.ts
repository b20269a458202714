// kill -9 of a real queue process while clients create messages and checkpoints run:
// every acknowledged create is there after the restart, exactly once, and nothing nobody sent.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { queueCommand } from '../../../src/ipc/rq1.js';
import { readQueMarkers } from '../../helpers/que-markers.js';
import { QueueProc, addQueue } from '../../helpers/rq-root.js';
import { perTestRoot } from '../../helpers/per-test-root.js';
import { seededRandom } from '../../helpers/seeded-random.mjs';

const ctx = perTestRoot();
const ROUNDS = Number(process.env.RQ_CHAOS_ROUNDS ?? 5);
const CLIENTS = 4;

interface Sent {
  /** param1 of every create sent, answered or not. */
  tried: Set<string>;
  /** param1 → short id, for the creates answered `ok`. */
  acked: Map<string, string>;
  /** Called after each ack. */
  onAck: () => void;
}

/** Clients creating messages until their socket fails (the kill), each create tagged `round.client.n`. */
function createUntilKilled(sock: string, name: string, round: number, sent: Sent): Promise<void>[] {
  return Array.from({ length: CLIENTS }, async (_, c) => {
    for (let n = 0; ; n++) {
      const tag = `${round}.${c}.${n}`;
      sent.tried.add(tag);
      let reply: unknown;
      try {
        reply = await queueCommand(sock, 'create_message', { dest: name, param1: tag }, { timeoutMs: 10_000 });
      } catch {
        return;
      }
      if (!Array.isArray(reply) || reply[0] !== 'ok') return;
      sent.acked.set(tag, String(reply[1]).split('/').pop()!);
      sent.onAck();
    }
  });
}

/** A durable write on acked messages in turn: each checkpoints the journal first, so kills land in checkpoints too. */
async function rescheduleUntilKilled(sock: string, sent: Sent, firstAck: Promise<void>): Promise<void> {
  await firstAck;
  for (let i = 0; ; i++) {
    const ids = [...sent.acked.values()];
    try {
      await queueCommand(sock, 'reschedule_message', { msg_id: ids[i % ids.length], delay: 3600 }, { timeoutMs: 10_000 });
    } catch {
      return;
    }
  }
}

describe('create journal under kill -9', () => {
  it(`${ROUNDS} rounds of kill -9 during creates and checkpoints: every acked create present once, none nobody sent`, { timeout: 120_000 }, async () => {
    const rng = seededRandom();
    const name = 'jcrash';
    await addQueue(ctx.t.root, name);
    // Paused: what the creates made stays in que/, where the check reads it.
    await fs.writeFile(path.join(ctx.t.root, 'config', `${name}.pause`), '');
    const sent: Sent = { tried: new Set(), acked: new Map(), onAck: () => undefined };
    for (let round = 0; round < ROUNDS; round++) {
      ctx.q = await QueueProc.start(ctx.t.root, name);
      const sock = ctx.q.paths.sock;
      const target = sent.acked.size + 20 + rng.int(200);
      // The kill comes after a seeded number of acks: an event, not a time.
      let first!: () => void;
      const firstAck = new Promise<void>((r) => (first = r));
      const reached = new Promise<void>((r) => {
        sent.onAck = () => {
          first();
          if (sent.acked.size >= target) r();
        };
      });
      const work = [...createUntilKilled(sock, name, round, sent), rescheduleUntilKilled(sock, sent, firstAck)];
      const stopped = Promise.all(work).then(() => {
        throw new Error(`every client stopped before the kill, at ${sent.acked.size} of ${target} acks (${rng.replay})`);
      });
      await Promise.race([reached, stopped]);
      await ctx.q.kill9();
      await Promise.all(work);
    }
    ctx.q = await QueueProc.start(ctx.t.root, name);

    const { byMarker, doubled } = await readQueMarkers(ctx.q.paths.state.que);
    expect(doubled, `made twice (${rng.replay})`).toEqual([]);
    const onDisk = new Map([...byMarker].map(([tag, m]) => [tag, m.id]));
    for (const [tag, id] of sent.acked) expect(onDisk.get(tag), `acked ${tag} (${id}) missing (${rng.replay})`).toBe(id);
    for (const tag of onDisk.keys()) expect(sent.tried.has(tag), `${tag} nobody sent (${rng.replay})`).toBe(true);
    expect((await ctx.q.cmd('num_messages')).que).toBe(onDisk.size);
    await ctx.q.stop();
    // A clean stop checkpoints: nothing left to replay.
    expect(await fs.readdir(path.join(ctx.t.root, 'queues', name, 'journal'))).toEqual([]);
    ctx.q = undefined;
  });
});
