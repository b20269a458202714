// What a QueueSpool is given: its host, clock and filesystem seam, the journal's cadence, and the queue's hooks for moves and failures.
import type { HostInfo } from '../message/message-id.js';
import type { FinishedState, State } from '../message/states.js';
import type { SpoolFs } from './spool-fs.js';

export interface SpoolDeps {
  /** The create journal's checkpoint cadence; `false` makes every create pay its own fsyncs (no journal). */
  journal?: false | { maxDelayMs?: number; maxRecords?: number };
  /** A background journal checkpoint failed (retried at the next); logged by the queue. */
  onJournalError?: (err: Error) => void;
  /** Every disk-changing call goes through it (tests record the order); the real fs by default. */
  fs?: SpoolFs;
  /** Epoch milliseconds. */
  now?: () => number;
  host: HostInfo;
  /** How many blank message directories to keep ready (see BlankDirs); none by default. */
  blanks?: number;
  /** Whether a blank made now carries the run files too: yes while a message made now would start soon (always, by default). */
  stageBlanks?: () => boolean;
  /** A history line could not be written (the move or event it describes stands); logged by the queue. */
  onHistoryError?: (err: Error) => void;
  /** Told of every move, once its rename is done (the queue turns it into a `moved` event). */
  onMoved?: (move: { id: string; from: State; to: State; actor: string; reason?: string; details?: Record<string, unknown> }) => void;
  /** Awaited before a message is finished or deleted, by any path: its dependents' outbox entry is written here (rq-beyond §B8.4). */
  beforeFinish?: (id: string, from: State, to: FinishedState | 'deleted') => Promise<void> | undefined;
}
