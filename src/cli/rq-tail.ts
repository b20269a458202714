// `rq tail`: prints a message's job/stdio.log and follows it (filesystem events, the web's LogTail) until the message has finished; exits by its outcome as rq wait does.
import path from 'node:path';
import type { Logger } from 'pino';
import { RqError } from '../errors.js';
import { queuePaths } from '../config/paths.js';
import { QueueClient } from '../ipc/queue-client.js';
import { type Located, LogTail } from '../web/log-tail.js';
import { ask, replyLine } from './queue-ask.js';
import type { RqCommand } from './rq-command.js';
import { EXIT } from './exit-codes.js';
import { MSG_ARG, MSG_ID_OR_ARG } from './common-options.js';
import { messageTarget } from './message-target.js';
import { outcomeExit } from './rq-wait.js';

/**
 * How often a follow asks whether the queue still answers. Asked, not watched: a stopped queue moves no file, and a
 * killed one leaves its socket behind, so no event would tell. One ping per follower every 2 s.
 */
const ALIVE_EVERY_MS = 2000;

/**
 * Says once on stderr when the message's queue stops answering (rq-mgr stopped, the queue restarting) and
 * again when it answers, while the follow goes on; the returned function stops asking.
 */
function sayWhenQueueAway(sock: string, queue: string, say: (line: string) => void): () => void {
  let away = false;
  let asking = false;
  const timer = setInterval(() => {
    if (asking) return;
    asking = true;
    void QueueClient.oneShot(sock, { timeoutMs: ALIVE_EVERY_MS })
      .ping()
      .catch(() => false)
      .then((answers) => {
        if (answers !== away) return;
        // Said at each change only: gone once, back once.
        away = !answers;
        say(
          away
            ? `rq: tail: queue ${queue} does not answer (rq-mgr stopped, or the queue restarting); still following: the message goes on when its queue is back (Ctrl-C stops)`
            : `rq: tail: queue ${queue} answers again; following`,
        );
      })
      .finally(() => (asking = false));
  }, ALIVE_EVERY_MS);
  return () => clearInterval(timer);
}

/** LogTail only logs why a watch could not be set up; the CLI has nowhere better to say it than nowhere. */
const quiet = { debug: () => undefined, warn: () => undefined } as unknown as Logger; // a two-method stand-in: LogTail calls nothing else

const tail: RqCommand = {
  summary: "print a message's output (job/stdio.log) and follow it until the message has finished",
  args: MSG_ARG,
  options: [MSG_ID_OR_ARG],
  notes: [
    'A queued message is waited for; a retried one is followed through its next run. Ctrl-C stops following.',
    'While its queue does not answer (rq-mgr stopped), one line on stderr says so, and the follow goes on.',
    'Exit (once the message has finished): 0 done or relayed, 1 err, 6 no such message (or deleted); 3 when the queue does not answer.',
  ],
  examples: ['rq tail 20261121.1938.16.662.2269494', 'rq tail test/20261121.1938.16.662.2269494'],
  run: async ({ opts, root, io }) => {
    const target = await messageTarget(opts, root);
    const p = queuePaths(root, target.queue);
    const locate = async (): Promise<Located | null> => {
      const r = await ask(root, target.queue, (c) => c.messageStatus(target.id));
      if (!r.ok) return null;
      const dir = path.resolve(root, r.value.path);
      // The queue names its own message directory; anything else is not read.
      if (!dir.startsWith(p.dir + path.sep)) return null;
      return { state: r.value.state, status: r.value.status, dir };
    };
    // A refusal other than "not found" (a DOWN queue) is the queue's line, as other commands print it.
    const first = await ask(root, target.queue, (c) => c.messageStatus(target.id));
    if (!first.ok && first.code !== 'RQ_ERR_NO_SUCH_MSG') {
      io.stdout(replyLine(first));
      return EXIT.fail;
    }
    if (!first.ok || !(await locate())) {
      io.stderr(`rq: tail: msg not found: ${target.queue}/${target.id}`);
      return EXIT.notFound;
    }
    const write = io.write ?? (async (text: string) => io.stdout(text));
    const stopAsking = sayWhenQueueAway(p.sock, target.queue, (line) => io.stderr(line));
    return new Promise<number>((resolve, reject) => {
      const follow = new LogTail({
        locate,
        stateDirs: [p.state.prep, p.state.que, p.state.run],
        msgId: target.id,
        file: 'stdio.log',
        offset: 0,
        log: quiet,
        send: (text) => write(text),
        state: () => undefined,
        end: (loc) => {
          follow.close();
          resolve(loc ? outcomeExit(loc.state) : EXIT.notFound);
        },
      });
      follow.start().catch((err: unknown) => reject(err instanceof RqError ? err : RqError.of('RQ_ERR_PROTOCOL', `tail: ${(err as Error).message}`)));
    }).finally(stopAsking);
  },
};

export const TAIL_COMMANDS: Record<string, RqCommand> = { tail };
