// GET /q/<q>/<id>/log/<file>/events: the job log as Server-Sent Events, from a byte offset until the job ends.
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError, invalidField, isRqError } from '../../errors.js';
import { isFinished } from '../../message/states.js';
import { openBeneath } from '../../spool/beneath.js';
import { queuePaths } from '../../config/paths.js';
import { type Located, LogTail } from '../log-tail.js';
import { requireFileName } from '../message-files.js';
import { pathParam } from '../request-params.js';
import type { WebContext } from '../web-context.js';

/** Proxies close idle streams; a comment line now and then keeps this one open. It reads nothing. */
const KEEP_ALIVE_MS = 25_000;

/** The log's size now, or null when it is not there (or is no regular file: a tail never opens one). */
async function logSize(dir: string, file: string): Promise<number | null> {
  try {
    const { fh, stat } = await openBeneath(dir, ['job', file], file);
    await fh.close();
    return Number(stat.size);
  } catch (err) {
    if (isRqError(err, 'RQ_ERR_FILE_NOT_FOUND')) return null;
    throw err;
  }
}

function startOffset(req: FastifyRequest): number {
  // EventSource resends the last id it saw when it reconnects: that is the byte offset to resume from.
  const raw = req.headers['last-event-id'] ?? (req.query as Record<string, unknown>).offset ?? '0';
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw invalidField('offset', 'a byte offset (whole number >= 0)', raw);
  return n;
}

export function tailEvents(ctx: WebContext) {
  return async function logEvents(req: FastifyRequest, reply: FastifyReply) {
    const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
    const id = ctx.requireMsgId(pathParam(req, 'id'));
    const file = requireFileName(pathParam(req, 'file'), 'Log file');
    const asked = startOffset(req);

    const locate = async (): Promise<Located | null> => {
      const r = await ctx.queue(q).messageStatus(id);
      if (!r.ok) return null;
      const v = r.value;
      const dir = path.resolve(ctx.deps.root, v.path);
      if (!dir.startsWith(ctx.paths.queues + path.sep)) return null;
      return { state: v.state, status: v.status, dir };
    };
    // Unknown messages, and a log a finished message does not have (it never will), get the 404 now, before the stream starts.
    // An unfinished message's log may not exist yet (stdio.log before its run): the tail waits for it.
    let size: number | null = null;
    for (let attempt = 0; attempt < 2 && size === null; attempt++) {
      const loc = await locate();
      if (!loc) throw RqError.of('RQ_ERR_MSG_NOT_FOUND', `${q}/${id}`);
      size = await logSize(loc.dir, file);
      if (size === null && !isFinished(loc.state)) break;
      // Absent where the queue said: it may have moved on (run ⇒ done) since, so it is looked up once more.
      if (size === null && attempt > 0 && isFinished(loc.state))
        throw RqError.of('RQ_ERR_FILE_NOT_FOUND', `Log file ${file}`, ` (message ${q}/${id} is ${loc.state})`);
    }
    // Past the end (a client's offset, or the Last-Event-ID of a log a retry cut back): from the end, which the stream's ids and `end` then say.
    // A 4xx would stop an EventSource for good rather than let it resume.
    const offset = Math.min(asked, size ?? 0);
    // Gone during the lookup: its 'close' has fired already, so a slot taken now would never be let go.
    if (req.raw.socket.destroyed) return reply.hijack();
    // Over max_sse_streams or max_tails_per_message: 503 with Retry-After, before the stream starts.
    reply.header('Retry-After', String(ctx.limits.retryAfterS));
    let stop = (): void => undefined;
    const slot = ctx.sse.take(`${q}/${id}`, () => stop());
    reply.removeHeader('Retry-After');

    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
      'X-Content-Type-Options': 'nosniff',
      // As /events (sse-stream.ts): the end of the stream is the end of its connection.
      Connection: 'close',
    });
    let open = true;
    const write = (chunk: string): Promise<void> =>
      new Promise((resolve) => {
        if (!open) return resolve();
        if (res.write(chunk)) return resolve();
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
    void write('retry: 2000\n\n');
    let sent = offset;
    const states = queuePaths(ctx.deps.root, q).state;
    const keepAlive = setInterval(() => void write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    // The status line between the start and the end of a run comes from the queue's event feed (its
    // `progress` events), through the connection the web already keeps to it: the log file does not carry it.
    // Past max_event_streams the tail still streams the log, with the status of its state changes only.
    const progress = ctx.eventHub.add({
      queues: [q],
      event: (ev) => {
        if (ev.type === 'progress' && ev.msg_id === id) void write(`event: state\ndata: ${JSON.stringify({ state: 'run', status: ev.status })}\n\n`);
      },
      gap: () => undefined,
      end: () => undefined,
    });
    const tail = new LogTail({
      locate,
      stateDirs: [states.prep, states.que, states.run],
      msgId: id,
      file,
      offset,
      log: ctx.log,
      send: (text, next) => {
        sent = next;
        return write(`id: ${next}\nevent: log\ndata: ${JSON.stringify(text)}\n\n`);
      },
      state: (loc) => void write(`event: state\ndata: ${JSON.stringify({ state: loc.state, status: loc.status })}\n\n`),
      end: (loc) => {
        clearInterval(keepAlive);
        progress?.remove();
        const info = loc ? { state: loc.state, status: loc.status, offset: sent } : { state: null, status: 'message not found', offset: sent };
        if (open) res.end(`event: end\ndata: ${JSON.stringify(info)}\n\n`);
        open = false;
      },
    });
    res.on('close', () => {
      open = false;
      clearInterval(keepAlive);
      progress?.remove();
      tail.close();
      slot.release();
    });
    // Web shutdown: a last `end` naming why, then the response is over.
    stop = () => {
      if (open) res.end(`event: end\ndata: ${JSON.stringify({ state: null, status: 'the web process is stopping', offset: sent })}\n\n`);
      open = false;
      tail.close();
    };
    await tail.start();
  };
}
