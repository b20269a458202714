// `rq wait`: blocks until a message has finished, on the queue's own events (its wait_message command, no polling), and exits by the outcome; `sendmesg --wait` shares it.
import { RqError, shown } from '../errors.js';
import { ask, replyLine } from './queue-ask.js';
import type { RqCommand, RqIo } from './rq-command.js';
import { EXIT } from './exit-codes.js';
import { JSON_FLAG, MSG_ARG, MSG_ID_OR_ARG } from './common-options.js';
import { messageTarget } from './message-target.js';
import { refusalDoc } from './json-output.js';
import type { Answer } from '../ipc/answer.js';
import { type Options, flagOpt, usage } from './rq-options.js';

/** The longest wait_message a queue takes at once; a longer (or unlimited) wait asks again, each call blocking on events. */
const CHUNK_S = 86_400;
const MAX_WAIT_S = 30 * 86_400;

/**
 * `--timeout S` / `--wait[=S]`: undefined when absent, null for no limit (a bare `--wait`),
 * else whole seconds from 0 (look once) to 30 days.
 */
export function waitOpt(opts: Options, key: string): number | null | undefined {
  const v = opts[key];
  if (v === undefined || v === false) return undefined;
  if (v === true) return null;
  if (!/^\d{1,8}$/.test(v) || Number(v) > MAX_WAIT_S) throw usage(`--${key}: expected whole seconds from 0 to ${MAX_WAIT_S}, received ${shown(v)}`);
  return Number(v);
}

/** The exit status of a finished message's state (`deleted` when it was removed before it finished). */
export function outcomeExit(state: string): number {
  // Relayed is a success here as for dependencies (rq-beyond §B8): the far host has the message.
  if (state === 'done' || state === 'relayed') return EXIT.ok;
  if (state === 'deleted') return EXIT.notFound;
  return EXIT.fail;
}

/** One finished or refused wait, as its line and as its `--json` document. */
type Report = { line: string; doc: unknown; code: number };

const timedOut = (): Report => ({ line: 'fail timed out', doc: { error: 'timed out', code: 'RQ_ERR_WAIT_TIMED_OUT' }, code: EXIT.timeout });
const refused = (a: Answer<unknown>, code: number): Report => ({ line: replyLine(a), doc: refusalDoc(a), code });

/**
 * Waits for `queue`/`id` to finish and prints one line: `ok <final status>` (`ok done - done
 * sleeping`, `ok deleted`), `fail timed out` or `fail msg not found`, or with `json` its document
 * (`{queue, msg_id, state, status}`, or a refusal); returns the exit status.
 */
export async function waitAndReport(root: string, queue: string, id: string, timeoutS: number | null, io: RqIo, json = false): Promise<number> {
  if (timeoutS !== 0) {
    const held = await heldBy(root, queue, id);
    if (held) io.stderr(held);
  }
  const r = await waitFor(root, queue, id, timeoutS);
  io.stdout(json ? JSON.stringify(r.doc) : r.line);
  return r.code;
}

/**
 * Why a wait may be long, said once on stderr before it: the message is in the que of a queue that
 * starts nothing (PAUSE, DOWN, SCRIPTERROR…), with the command that lifts it. Null when nothing holds it.
 */
async function heldBy(root: string, queue: string, id: string): Promise<string | null> {
  const d = await ask(root, queue, (c) => c.statusDetail()).catch(() => null);
  if (!d?.ok || d.value.status === 'UP') return null;
  const m = await ask(root, queue, (c) => c.messageStatus(id)).catch(() => null);
  if (!m?.ok || m.value.state !== 'que') return null;
  const lift = d.value.status === 'PAUSE' ? `; rq resume ${queue} lets it run` : d.value.status === 'DOWN' ? `; rq up ${queue} lets it run` : '';
  return `rq: ${queue}/${id} waits in que: queue ${queue} is ${d.value.status}${d.value.reason ? ` (${d.value.reason})` : ''}${lift}`;
}

async function waitFor(root: string, queue: string, id: string, timeoutS: number | null): Promise<Report> {
  const deadline = timeoutS === null ? Infinity : Date.now() + timeoutS * 1000;
  const finished = (v: { state: string; status: string }): Report => ({
    line: `ok ${v.status}`,
    doc: { queue, msg_id: id, state: v.state, status: v.status },
    code: outcomeExit(v.state),
  });
  if (timeoutS === 0) {
    const s = await ask(root, queue, (c) => c.messageStatus(id));
    if (!s.ok) return refused(s, s.code === 'RQ_ERR_NO_SUCH_MSG' ? EXIT.notFound : EXIT.fail);
    if (!['done', 'err', 'relayed'].includes(s.value.state)) return timedOut();
    return finished(s.value);
  }
  for (;;) {
    const left = Math.min(CHUNK_S, Math.ceil((deadline - Date.now()) / 1000));
    if (left < 1) return timedOut();
    // The socket waits on the queue's move events; the client allows a little more than the wait itself.
    const w = await ask(root, queue, (c) => c.waitFinished(id, left), (left + 5) * 1000);
    if (w.ok) return finished(w.value);
    if (w.code === 'RQ_ERR_WAIT_TIMED_OUT') continue;
    if (w.code === 'RQ_ERR_NO_SUCH_MSG') return refused(w, EXIT.notFound);
    // `status: DOWN` here is the queue process stopping while we waited.
    if (w.code === 'RQ_ERR_QUEUE_DOWN') throw RqError.of('RQ_ERR_NO_REPLY', `queue ${queue}: its process stopped while waiting for ${queue}/${id}`);
    return refused(w, EXIT.fail);
  }
}

const wait: RqCommand = {
  summary: 'wait until a message has finished and exit by its outcome (0 done or relayed, 1 err, 4 timed out, 6 not found)',
  args: MSG_ARG,
  options: [
    MSG_ID_OR_ARG,
    { name: 'timeout', arg: 'S', expected: 'whole seconds', help: 'give up after S seconds (0: look once; default: no limit)' },
    JSON_FLAG,
  ],
  notes: [
    'Prints one line: ok <final status> (ok done - <last status line>), fail timed out, or fail msg not found;',
    'with --json {"queue","msg_id","state","status"}, or {"error","code"} (docs/cli.md, JSON output).',
    'Exit: 0 done or relayed, 1 err, 2 usage, 3 the queue does not answer (or stopped), 4 timed out, 6 no such message (or deleted).',
  ],
  examples: [
    'rq wait http://127.0.0.1:3333/q/test/20261121.1938.16.662.2269494 --timeout 600',
    'id=$(rq sendmesg --dest build --param1 x | cut -d" " -f2); if rq wait "$id"; then echo built; fi',
  ],
  run: async ({ opts, root, io }) => {
    const target = await messageTarget(opts, root);
    const timeout = waitOpt(opts, 'timeout');
    return waitAndReport(root, target.queue, target.id, timeout ?? null, io, flagOpt(opts, 'json'));
  },
};

export const WAIT_COMMANDS: Record<string, RqCommand> = { wait };
