// The queue's live event feed (queues/<q>/events.sock): every move of every message and each status change, as numbered JSON lines to whoever listens.
import type { EventEmitter } from 'node:events';
import fsp from 'node:fs/promises';
import type { Logger } from 'pino';
import type { FeedEvent, FeedHello } from '../../ipc/feed-event.js';
import { listenFeed } from '../../ipc/feed-server.js';
import { statusText } from '../../message/message.js';
import { ProgressPacer } from './progress-pacer.js';
import type { QueueEventMap, QueueEvents } from '../status/queue-events.js';

/** At most one progress event per running message this often (the latest text wins). */
const PROGRESS_INTERVAL_MS = 100;

export interface EventFeedDeps {
  path: string;
  queue: string;
  events: QueueEvents;
  /** A message's tags now (the queue's tag index): the web filters on them. */
  tagsOf: (id: string) => readonly string[];
  now: () => number;
  log: Logger;
}

export interface EventFeed {
  /** Unsubscribes, hands the readers what they were sent, and removes the socket file. */
  close(): Promise<void>;
}

type Body = Omit<FeedEvent, 'seq' | 'at' | 'queue' | 'tags'>;

/**
 * The queue events the feed carries: `line` only as the status text it sets (`progress`; the job output
 * itself is the live tail's); not `interrupted`: the queue is stopping.
 */
const WATCHED = ['created', 'moved', 'started', 'line', 'finished', 'removed', 'status', 'bulk'] as const;
type Watched = (typeof WATCHED)[number];

/** Listens on `path` and subscribes to the queue's events; a reader only observes, so nothing here waits or fails a move. */
export async function startEventFeed(d: EventFeedDeps): Promise<EventFeed> {
  let seq = 0;
  const hello = (): string => JSON.stringify({ type: 'hello', queue: d.queue, pid: process.pid, seq, at: d.now() } satisfies FeedHello);
  const server = await listenFeed({ path: d.path, log: d.log, hello });

  // Numbered even with nobody listening, so the numbers count the queue's events; built only for readers.
  const send = (body: Body): void => {
    seq++;
    if (server.readers() === 0) return;
    const tags = body.msg_id === undefined ? [] : d.tagsOf(body.msg_id);
    const ev: FeedEvent = { seq, at: d.now(), queue: d.queue, ...body, ...(tags.length ? { tags: [...tags] } : {}) };
    server.send(JSON.stringify(ev));
  };

  const pacer = new ProgressPacer(PROGRESS_INTERVAL_MS, d.now, (id, text) => send({ type: 'progress', msg_id: id, status: `run - ${text}` }));

  const listeners: { [K in Watched]: (...a: QueueEventMap[K]) => void } = {
    created: ({ msg, state }) => send({ type: 'created', msg_id: msg.msg_id, to: state }),
    moved: ({ id, from, to, actor, reason }) => {
      // A text still paced would come after the move out of run: the move's events tell the end instead.
      if (from === 'run') pacer.forget(id);
      send({ type: 'moved', msg_id: id, from, to, actor, ...(reason === undefined ? {} : { reason }) });
    },
    // Nobody to tell: not even paced (no timers for a queue nobody watches).
    line: ({ id, progress }) => progress !== undefined && server.readers() > 0 && pacer.report(id, progress ?? ''),
    started: ({ msg, pid }) => send({ type: 'started', msg_id: msg.msg_id, ...(pid > 0 ? { pid } : {}) }),
    finished: ({ msg, outcome }) =>
      send({
        type: 'finished',
        msg_id: msg.msg_id,
        to: outcome.state,
        // As get_message says it: `done - all good`.
        ...(outcome.statusText === null ? {} : { status: statusText(outcome.state, { job_status: outcome.statusText }) }),
      }),
    removed: ({ id, state }) => send({ type: 'removed', msg_id: id, from: state }),
    status: ({ status }) => send({ type: 'status', status }),
    bulk: ({ job: { job, op, total, done, changed, skipped, state } }) => send({ type: 'bulk', bulk: { job, op, total, done, changed, skipped, state } }),
  };
  // The listeners are typed against QueueEventMap above; node's typed on() cannot follow a loop over their names.
  const emitter = d.events as unknown as EventEmitter;
  const subscribe = (name: Watched): void => {
    // The tag index forgets a removed message in its own `removed` listener: this one must read its tags first.
    if (name === 'removed') emitter.prependListener(name, listeners[name]);
    else emitter.on(name, listeners[name]);
  };
  for (const name of WATCHED) subscribe(name);

  return {
    async close() {
      for (const name of WATCHED) emitter.off(name, listeners[name]);
      pacer.close();
      await server.close();
      await fsp.rm(d.path, { force: true });
    },
  };
}
