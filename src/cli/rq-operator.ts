// The operator's short commands: `rq retry` (requeue an err message), `rq rm` (delete one), `rq pause`, `resume`, `down` and `up` (a queue, through rq-mgr).
import fs from 'node:fs';
import { RqError, isRqError } from '../errors.js';
import { queuePaths, rootPaths } from '../config/paths.js';
import { type AdminOp, MgrClient } from '../ipc/mgr-client.js';
import { actor, ask, replyLine } from './queue-ask.js';
import type { RqCommand } from './rq-command.js';
import { MSG_ARG, MSG_ID_OR_ARG, QUEUE_ARG, QUEUE_OR_ARG } from './common-options.js';
import { messageTarget } from './message-target.js';
import { checkQueueName, flagOpt, requiredOpt } from './rq-options.js';

/** rq-mgr writes the admin files; it answers at once or not at all. */
const MGR_TIMEOUT_MS = 10_000;

const retry: RqCommand = {
  summary: 'send an err message back to the que under its own id, to run again (rq requeue for one message)',
  args: MSG_ARG,
  options: [MSG_ID_OR_ARG, { name: 'reset', kind: 'flag', help: 'also zero its failure and interrupt counts (a fresh set of retries)' }],
  examples: ['rq retry test/20261121.1938.16.662.2269494', 'rq retry http://127.0.0.1:3333/q/test/20261121.1938.16.662.2269494 --reset'],
  run: async ({ opts, root, io }) => {
    const target = await messageTarget(opts, root);
    const reset = flagOpt(opts, 'reset');
    const a = await ask(root, target.queue, (c) => c.requeue(target.id, { reset, actor: actor(io.env) }));
    io.stdout(replyLine(a));
    return a.ok ? 0 : 1;
  },
};

const rm: RqCommand = {
  summary: 'delete a message that is not running (prep, que, done, relayed or err); rq cancel --purge stops and deletes a running one',
  args: MSG_ARG,
  options: [MSG_ID_OR_ARG],
  examples: ['rq rm test/20261121.1938.16.662.2269494'],
  run: async ({ opts, root, io }) => {
    const target = await messageTarget(opts, root);
    const a = await ask(root, target.queue, (c) => c.act('delete_message', target.id));
    io.stdout(replyLine(a));
    return a.ok ? 0 : 1;
  },
};

/** What an admin change leaves in force that the operator may think it undid: DOWN and PAUSE are two files (spec §5.1). */
function stillInForce(op: AdminOp, root: string, queue: string): string {
  const p = queuePaths(root, queue);
  const down = (op === 'resume' || op === 'pause') && fs.existsSync(p.downFile);
  if (down) return ` (it is ${op === 'pause' ? 'DOWN too' : 'still DOWN'}: rq up ${queue})`;
  const paused = (op === 'up' || op === 'down') && fs.existsSync(p.pauseFile);
  if (paused) return ` (it is ${op === 'down' ? 'paused too' : 'still paused'}: rq resume ${queue})`;
  return '';
}

/** pause / resume / down / up through rq-mgr, which writes the queue's admin file; the queue sees it at once. */
function admin(op: AdminOp, summary: string, done: string): RqCommand {
  return {
    summary,
    args: QUEUE_ARG,
    options: [QUEUE_OR_ARG],
    notes: ["Needs rq-mgr running (it writes the queue's admin file); exit 3 when it does not answer."],
    examples: [`rq ${op} test`],
    run: async ({ opts, root, io }) => {
      const queue = checkQueueName(requiredOpt(opts, 'queue', `a queue name (rq ${op} <queue>)`), 'queue');
      if (!fs.statSync(queuePaths(root, queue).dir, { throwIfNoEntry: false })?.isDirectory()) throw RqError.of('RQ_ERR_NO_SUCH_QUEUE', queue);
      let a;
      try {
        a = await new MgrClient(rootPaths(root).mgrSock, MGR_TIMEOUT_MS).admin(op, queue);
      } catch (err) {
        if (isRqError(err, 'RQ_ERR_NO_REPLY')) throw RqError.of('RQ_ERR_NO_REPLY', `rq-mgr does not answer, and it ${op}s queues (${err.message})`);
        throw err;
      }
      io.stdout(a.ok ? `ok queue ${queue} ${done}${stillInForce(op, root, queue)}` : replyLine(a));
      return a.ok ? 0 : 1;
    },
  };
}

export const OPERATOR_COMMANDS: Record<string, RqCommand> = {
  retry,
  rm,
  pause: admin('pause', 'pause a queue: running messages finish, no new ones start until rq resume', 'paused'),
  resume: admin('resume', 'resume a paused queue', 'resumed'),
  down: admin('down', 'put a queue down: it refuses new messages and starts none; running ones finish (rq up undoes it)', 'down'),
  up: admin('up', 'bring a queue that is down up again (a pause stays until rq resume)', 'up'),
};
