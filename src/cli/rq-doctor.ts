// `rq doctor`: every scandir entry and queue of the root that is not running as it should, each with the reason and the fix.
import { queuePaths, rootPaths } from '../config/paths.js';
import { MgrClient } from '../ipc/mgr-client.js';
import { QueueClient } from '../ipc/queue-client.js';
import { TimersClient } from '../ipc/timers-client.js';
import { type DoctorReport, type Finding, doctorReport } from '../mgr/doctor.js';
import type { RqCommand } from './rq-command.js';
import { JSON_FLAG } from './common-options.js';
import { flagOpt } from './rq-options.js';

/** A queue answers its status at once, even when busy: one that takes longer is reported as not answering. */
const QUEUE_TIMEOUT_MS = 5000;

/** `problem <subject>: <reason>; fix: <fix>` (or `info …` for a state an operator chose). */
export const findingLine = (f: Finding): string => `${f.severity} ${f.subject}: ${f.reason}; fix: ${f.fix}`;

/** The lines `rq doctor` prints: rq-mgr down is its one line; else each finding, then the verdict. */
export function doctorLines(r: DoctorReport): string[] {
  if (!r.mgr) return r.findings.map(findingLine);
  const problems = r.findings.filter((f) => f.severity === 'problem').length;
  const verdict = r.ok
    ? `ok: ${r.running} ${r.running === 1 ? 'queue' : 'queues'} running, nothing to fix`
    : `fail: ${problems} ${problems === 1 ? 'problem' : 'problems'} to fix, ${r.running} ${r.running === 1 ? 'queue' : 'queues'} running`;
  return [...r.findings.map(findingLine), verdict];
}

const doctor: RqCommand = {
  summary: 'list every scandir entry and queue that is not running as it should, with the reason and the fix',
  options: [JSON_FLAG],
  notes: [
    'Checks: rq-mgr answers; scandir entries it refused (no executable run, a dangling link, a name too long for the root);',
    'each queue (SCRIPTERROR and why, DISK FULL, a process that keeps dying; PAUSE and DOWN set by an operator as info);',
    'the web and timers processes (a web port held by another program, with the command that picks another), and each',
    'entry of timers/ that defines no timer, with why, and each timer whose last message was not delivered (a dest that',
    'names no queue); in a fleet, this host refused its name, cut off from etcd, or',
    'advertised at a URL that does not lead back to its web;',
    "config/config.json (readable by others while it holds passwords); free space on the root's filesystem.",
    'Exit 0 when nothing is to fix (info lines may show), 1 otherwise; with rq-mgr down that is the one line printed.',
    '--json prints {ok, mgr, running, findings: [{severity, subject, reason, fix}]}.',
  ],
  examples: ['rq doctor', 'rq doctor --json'],
  run: async ({ opts, root, io }) => {
    const report = await doctorReport({
      root,
      mgr: new MgrClient(rootPaths(root).mgrSock),
      statusDetail: (queue) => QueueClient.oneShot(queuePaths(root, queue).sock, { timeoutMs: QUEUE_TIMEOUT_MS }).statusDetail(),
      timers: new TimersClient(rootPaths(root).timersSock),
    });
    if (flagOpt(opts, 'json')) io.stdout(JSON.stringify(report));
    else for (const line of doctorLines(report)) io.stdout(line);
    return report.ok ? 0 : 1;
  },
};

export const DOCTOR_COMMANDS: Record<string, RqCommand> = { doctor };
