// Coalescing (spec §3.5): queued messages with the running one's params ride along and end with it.
import type { QueueConfig } from '../../config/queue-config.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { paramKey } from '../index/que-index.js';
import type { MessageIndex } from '../index/message-index.js';
import type { ScriptRun } from '../launch/script-run.js';

export interface CoalescerDeps {
  index: MessageIndex;
  spool: QueueSpool;
  config: () => QueueConfig;
}

export class Coalescer {
  constructor(private readonly d: CoalescerDeps) {}

  /** At the start of `run`: folds every queued message with the same coalesce params into it. */
  fold(run: ScriptRun): void {
    const keys = this.d.config().coalesce_params;
    if (!keys.length) return;
    const key = paramKey(run.msg, keys);
    const parent = this.d.spool.fullId(run.id);
    for (const m of this.d.index.queuedWhere((q) => paramKey(q, keys) === key)) {
      this.d.index.fold(m, parent);
      run.dups.push(m);
    }
    if (run.dups.length) run.msg.dups = run.dups.map((m) => m.msg_id);
  }

  /** The run did not end well (err, resend, SCRIPTERROR): its folded messages go back to the que. */
  release(run: ScriptRun): void {
    for (const m of run.dups) this.d.index.unfold(m);
    if (run.dups.length) delete run.msg.dups;
    run.dups = [];
  }

  /** The run ended done or relayed: so do its folded messages, each with a status naming the parent. */
  async finalise(run: ScriptRun, state: 'done' | 'relayed'): Promise<void> {
    if (!run.dups.length) return;
    const { spool, index } = this.d;
    const parent = spool.fullId(run.id);
    for (const m of run.dups) {
      await spool.writeStatus(spool.msgDir('que', m.msg_id), `duplicate ${parent}`, true);
      await spool.writeMessage('que', m.msg_id, m);
      await spool.move(m.msg_id, 'que', state, { actor: 'coalesce', reason: `duplicate ${parent}` });
      index.dropFolded(m.msg_id);
      index.addFinished(state, 1);
    }
    run.msg.dups = run.dups.map((m) => spool.fullId(m.msg_id));
    await spool.writeMessage('run', run.id, run.msg);
  }
}
