// Failure groups of a queue's err messages (rq-beyond §B15.4, qless `failed`): built on first use from one read per err message, then kept by the queue's events.
import type { Logger } from 'pino';
import type { FailureGroupPage } from '../../ipc/stats-reply.js';
import type { Message } from '../../message/message.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { mapLimit } from '../../spool/map-limit.js';
import type { QueueEvents } from '../status/queue-events.js';
import { ReadOnce } from './read-once.js';

interface Member {
  group: string;
  outcome: string;
  failure?: string;
  text?: string;
  at?: string;
}

const LANES = 16;
const WORD_CLASS = /^([^\s:]{1,64}):/;

/** The group of an err message: its outcome unless failed/exhausted, else the class of its last failure text (`ValueError: …`), else its failure kind. */
export function groupOf(msg: Message, status: string | null): string {
  const outcome = typeof msg.outcome === 'string' ? msg.outcome : 'failed';
  if (outcome !== 'failed' && outcome !== 'exhausted') return outcome;
  const last = typeof msg.last_failure === 'object' && msg.last_failure !== null ? (msg.last_failure as Record<string, unknown>) : {};
  const text = typeof last.text === 'string' ? last.text : (status ?? '');
  return WORD_CLASS.exec(text)?.[1] ?? (typeof last.kind === 'string' ? last.kind : 'err');
}

export class FailureGroups {
  private readonly members = new ReadOnce(() => this.build());
  private readonly latest = new Map<string, symbol>();
  /** Reads of messages that just moved into err: an answer waits for them, so it includes what the asker just saw fail. */
  private readonly reading = new Set<Promise<unknown>>();

  constructor(private readonly d: { spool: QueueSpool; events: QueueEvents; log: Logger }) {
    d.events.on('moved', ({ id, from, to }) => {
      if (to === 'err' && from !== 'err') this.change(id, this.read(id));
      else if (from === 'err') this.change(id, null);
    });
    d.events.on('removed', ({ id, state }) => {
      if (state === 'err') this.change(id, null);
    });
    // Acknowledged errors are in no group; messages that failed while the ack ran stay in theirs.
    d.events.on('acked', ({ ids }) => ids.forEach((id) => this.change(id, null)));
  }

  async groups(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const m of (await this.built()).values()) out[m.group] = (out[m.group] ?? 0) + 1;
    return out;
  }

  /** Ids of the group's err messages. */
  async ids(group: string): Promise<Set<string>> {
    const out = new Set<string>();
    for (const [id, m] of await this.built()) if (m.group === group) out.add(id);
    return out;
  }

  /** A page of the group's messages, newest first (ids sort by time). */
  async page(group: string, offset: number, limit: number): Promise<FailureGroupPage> {
    const ids = [...(await this.ids(group))].sort().reverse();
    const members = await this.built();
    const messages = ids.slice(offset, offset + limit).map((id) => {
      const { group: _, ...m } = members.get(id)!;
      return { msg_id: id, ...m };
    });
    return { group, total: ids.length, messages };
  }

  private change(id: string, member: Promise<Member | null> | null): void {
    const members = this.members.current;
    if (members === null) {
      // Heard while the first build reads err/: applied over what it found, each read awaited in turn.
      return this.members.apply(async (m) => {
        const found = member && (await member);
        if (found) m.set(id, found);
        else m.delete(id);
      });
    }
    // Only the latest change of an id lands: a read that finishes after the message left err is dropped.
    const token = Symbol(id);
    this.latest.set(id, token);
    if (member === null) {
      this.latest.delete(id);
      return void members.delete(id);
    }
    const landed = member.then((m) => {
      if (this.latest.get(id) !== token) return;
      this.latest.delete(id);
      if (m) members.set(id, m);
      else members.delete(id);
    });
    this.reading.add(landed);
    void landed.finally(() => this.reading.delete(landed));
  }

  private async built(): Promise<Map<string, Member>> {
    const members = await this.members.get();
    await Promise.all(this.reading);
    return members;
  }

  private async build(): Promise<Map<string, Member>> {
    const ids = await this.d.spool.listFlat('err');
    const found = await mapLimit(ids, LANES, (id) => this.read(id));
    const members = new Map<string, Member>();
    ids.forEach((id, i) => found[i] && members.set(id, found[i]));
    this.d.log.info({ err: members.size }, 'failure groups built');
    return members;
  }

  private async read(id: string): Promise<Member | null> {
    try {
      const [msg, status] = await Promise.all([this.d.spool.readMessage('err', id), this.d.spool.readStatus('err', id).catch(() => null)]);
      const last = (msg.last_failure ?? {}) as Record<string, unknown>;
      const text = typeof last.text === 'string' ? last.text : status?.job_status;
      return {
        group: groupOf(msg, status?.job_status ?? null),
        outcome: typeof msg.outcome === 'string' ? msg.outcome : 'failed',
        ...(typeof last.kind === 'string' ? { failure: last.kind } : {}),
        ...(text ? { text } : {}),
        ...(typeof last.at === 'string' ? { at: last.at } : {}),
      };
    } catch {
      // Gone (acknowledged, requeued or deleted) before it could be read: in no group.
      return null;
    }
  }
}
