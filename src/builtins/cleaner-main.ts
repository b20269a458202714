// The cleaner queue's script (scripts/cleaner/run): param1 = queue name or ALLQUEUES, param2 = whole days to keep (default 3).
import fs from 'node:fs';
import { queuePaths } from '../config/paths.js';
import { QueueClient } from '../ipc/queue-client.js';
import { queueNameProblem } from '../message/names.js';
import { type DeleteResult, type QueueAccess, clean, summary } from './cleaner.js';
import { scriptLog } from '../script-kit/log.js';
import { ScriptPipe, pipeFds } from '../script-kit/pipe.js';
import { scriptRoot } from '../script-kit/root.js';

export const DEFAULT_DAYS = 3;

/** A busy queue may be fsyncing a burst; a dead one fails at connect. */
const REPLY_TIMEOUT_MS = 30_000;

function socketAccess(root: string): QueueAccess {
  const client = (queue: string) => QueueClient.oneShot(queuePaths(root, queue).sock, { timeoutMs: REPLY_TIMEOUT_MS });
  return {
    async state(queue) {
      try {
        const r = await client(queue).status();
        return r.ok && r.value === 'DOWN' ? 'down' : 'up';
      } catch {
        return 'none';
      }
    },
    async deleteMessage(queue, id): Promise<DeleteResult> {
      try {
        const r = await client(queue).act('delete_message', id);
        if (r.ok) return 'deleted';
        if (r.code === 'RQ_ERR_NO_SUCH_MSG') return 'gone';
        if (r.code === 'RQ_ERR_QUEUE_DOWN') return 'down';
        return 'failed';
      } catch {
        return 'failed';
      }
    },
  };
}

async function main(env: NodeJS.ProcessEnv): Promise<number> {
  const pipe = new ScriptPipe(pipeFds(env));
  const log = scriptLog();
  const which = env.RQ_PARAM1 ?? '';
  const daysText = (env.RQ_PARAM2 ?? '').trim();
  if (which !== 'ALLQUEUES' && queueNameProblem(which) !== null) {
    pipe.send('err', `param1: expected a queue name or ALLQUEUES, received ${JSON.stringify(which)}`);
    return 0;
  }
  if (daysText !== '' && !/^\d+$/.test(daysText)) {
    pipe.send('err', `param2: expected a whole number of days to keep, received ${JSON.stringify(daysText)}`);
    return 0;
  }
  const days = daysText === '' ? DEFAULT_DAYS : Number(daysText);
  const root = scriptRoot(env);
  if (which !== 'ALLQUEUES' && !fs.existsSync(queuePaths(root, which).dir)) {
    pipe.send('err', `the specified queue [${which}] does not exist`);
    return 0;
  }
  pipe.send('run', `cleaning ${which === 'ALLQUEUES' ? 'all queues' : which}, keeping ${days} days`);
  const report = await clean(
    {
      root,
      queues: socketAccess(root),
      now: Date.now,
      progress: (text) => {
        log(text);
        pipe.send('run', text);
      },
      log,
    },
    which,
    days,
  );
  const text = summary(report);
  log(text);
  pipe.send('done', text);
  return 0;
}

main(process.env).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`cleaner: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
