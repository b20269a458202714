// What a running script's fd 3 lines do: progress text and status, the heartbeat, dup, and the completion they record.
import type { QueueSpool } from '../../spool/queue-spool.js';
import { recordCompletion } from '../rules/completion.js';
import { type DupDeps, dup } from './dup.js';
import { isProgressLine, lineProblem, parseLine } from '../rules/pipe-protocol.js';
import type { QueueEvents } from '../status/queue-events.js';
import type { ScriptRun } from '../launch/script-run.js';

export interface RunLineDeps {
  spool: QueueSpool;
  events: QueueEvents;
  dup: DupDeps;
  now: () => number;
}

export function onRunLine(d: RunLineDeps, run: ScriptRun, line: string): void {
  const pl = parseLine(line);
  d.events.emit('line', isProgressLine(pl) ? { id: run.id, line, progress: pl.arg } : { id: run.id, line });
  run.lastLine = d.now();
  run.deadlines?.beat(run.lastLine);
  // `beat` renews the heartbeat only: the operator's progress text stays (rq-beyond §B11).
  if (pl.keyword === 'beat') return;
  run.setStatus(pl.arg);
  const problem = lineProblem(pl);
  if (problem) run.log.warn({ line }, `fd 3: ${problem}; the line is status text only, no completion`);
  if (pl.keyword === 'dup') {
    run.track(dup(d.dup, run, pl.arg).then((reply) => run.script?.reply(reply)));
    return;
  }
  const had = run.completion;
  run.completion = recordCompletion(had, pl, run.msg, Math.floor(d.now() / 1000));
  if (!had && run.completion?.kind === 'resend') {
    const dir = run.dir!;
    run.track(Promise.all([d.spool.writeMessage('run', run.id, run.msg), d.spool.markResend(dir)]));
  }
}
