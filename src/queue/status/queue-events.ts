// The queue's typed events: what observers (webhooks, logs, later stats, metrics and the live stream) subscribe to.
import { EventEmitter } from 'node:events';
import type { Message } from '../../message/message.js';
import type { State } from '../../message/states.js';
import type { RunUsage } from '../launch/run-usage.js';
import type { Outcome } from '../rules/completion.js';
import type { QueueStatus } from './admin-state.js';
import type { BulkJob } from '../../ipc/bulk-reply.js';

export interface QueueEventMap {
  /** A message was written: to prep/ (not committed) or que/. Told when it is visible, before any move of it (its fsyncs may still run). */
  created: [{ msg: Message; state: 'prep' | 'que' }];
  /** One rename between states, as the history file records it. */
  moved: [{ id: string; from: State; to: State; actor: string; reason?: string; details?: Record<string, unknown> }];
  /** A waiting message's fields were changed on disk (a reschedule, a priority, run now): `change` holds the new values. */
  changed: [{ id: string; change: Partial<Message> }];
  /** A script was started for a message. */
  started: [{ msg: Message; pid: number; script: string }];
  /** A line the script wrote on fd 3; `progress`, the status text it set, when it is a progress line (pipe-protocol.ts isProgressLine). */
  line: [{ id: string; line: string; progress?: string | null }];
  /** A message has reached `outcome.state` (que for a resend); `ms` is its run's wall time, null when it finished without running (a cancel from the que). */
  finished: [{ msg: Message; outcome: Outcome; code: number | null; signal: NodeJS.Signals | null; ms: number | null; usage?: RunUsage }];
  /** A run was cut short by the queue's shutdown: the message stays in run/ until the next start. */
  interrupted: [{ id: string }];
  /** ack_errs renamed these err messages to their acknowledged (dotted) names. */
  acked: [{ ids: string[] }];
  /** A message was deleted. */
  removed: [{ id: string; state: State }];
  /** The queue's status changed (pause/down files, SCRIPTERROR cleared). */
  status: [{ status: QueueStatus }];
  /** A bulk action's progress: after each batch, and once when it has finished (a copy of the job). */
  bulk: [{ job: BulkJob }];
  /** The process is stopping: requests that wait on messages answer now, so the socket can close. */
  closing: [];
}

export class QueueEvents extends EventEmitter<QueueEventMap> {
  constructor() {
    super();
    // Every `wait_message` in flight listens until its message finishes; the socket's connection limit bounds them, not a count of 10.
    this.setMaxListeners(0);
  }
}
