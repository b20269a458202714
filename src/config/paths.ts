// Every path under a root, derived in one place so nothing depends on the current directory.
import path from 'node:path';
import { type State, STATES } from '../message/states.js';

export interface RootPaths {
  root: string;
  queues: string;
  scandir: string;
  timers: string;
  config: string;
  log: string;
  trash: string;
  configFile: string;
  /** Concurrency per limit key (rq-beyond §B12.1); optional. */
  limitsFile: string;
  mgrPid: string;
  mgrSock: string;
  timersSock: string;
  scripts: string;
}

export function rootPaths(root: string): RootPaths {
  const config = path.join(root, 'config');
  const queues = path.join(root, 'queues');
  return {
    root,
    queues,
    scandir: path.join(root, 'scandir'),
    timers: path.join(root, 'timers'),
    config,
    log: path.join(root, 'log'),
    trash: path.join(queues, '.trash'),
    configFile: path.join(config, 'config.json'),
    limitsFile: path.join(config, 'limits.json'),
    mgrPid: path.join(config, 'queuemgr.pid'),
    mgrSock: path.join(config, 'queuemgr.sock'),
    timersSock: path.join(root, 'timers', 'sock'),
    scripts: path.join(root, 'scripts'),
  };
}

export interface QueuePaths {
  name: string;
  dir: string;
  configFile: string;
  formFile: string;
  pidFile: string;
  /** Idempotency keys of recent creates, one JSON line each (queue/coordination/idempotency.ts). */
  keysFile: string;
  /** The tag index journal (rq-beyond §B9.3, queue/tags/tag-index.ts): derived data, rebuilt from every msg when missing. */
  tagsFile: string;
  /** Statistics (rq-beyond §B15.2): not state, written without fsync. */
  statsDir: string;
  /** The create journal (spool/create-journal.ts): what makes a create durable until a checkpoint. */
  journalDir: string;
  sock: string;
  /** The live event feed (queue/observers/event-feed.ts): one JSON line per move, pushed to every reader. */
  eventsSock: string;
  downFile: string;
  pauseFile: string;
  state: Record<State, string>;
}

/** A queue's directory alone: what a check on every request needs, without the ~20 joins of queuePaths. */
export function queueDir(root: string, name: string): string {
  return path.join(root, 'queues', name);
}

export function queuePaths(root: string, name: string): QueuePaths {
  const dir = queueDir(root, name);
  const state = Object.fromEntries(STATES.map((s) => [s, path.join(dir, s)])) as Record<State, string>;
  return {
    name,
    dir,
    configFile: path.join(dir, 'config.json'),
    formFile: path.join(dir, 'form.json'),
    pidFile: path.join(dir, 'queue.pid'),
    keysFile: path.join(dir, 'idempotency.jsonl'),
    tagsFile: path.join(dir, '.index', 'tags.jsonl'),
    statsDir: path.join(dir, 'stats'),
    journalDir: path.join(dir, 'journal'),
    sock: path.join(dir, 'queue.sock'),
    eventsSock: path.join(dir, 'events.sock'),
    downFile: path.join(root, 'config', `${name}.down`),
    pauseFile: path.join(root, 'config', `${name}.pause`),
    state,
  };
}
