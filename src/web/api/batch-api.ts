// POST /q/<q>/new_messages: a JSON array or JSON lines of messages, created by the queue's create_messages under one group commit; a batch made only in part is never answered 2xx.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { counted, invalidField, isRqError, RqError, shown } from '../../errors.js';
import { queuePaths } from '../../config/paths.js';
import { MAX_CREATE_BATCH, QueueClient } from '../../ipc/queue-client.js';
import { mayHaveArrived } from '../../ipc/socket-client.js';
import type { Answer } from '../../ipc/answer.js';
import { refuseFieldNames, typoBudget } from '../../message/create-fields.js';
import { RELAY_QUEUE } from '../../message/fleet-dest.js';
import { isRelayedDest } from '../../message/relay-dests.js';
import { type PartialReport, partialReply, partialStatus } from '../../ipc/partial-reply.js';
import { locateJsonError } from '../json-position.js';
import { pathParam } from '../request-params.js';
import { withHeaderTrace } from '../trace-headers.js';
import type { WebContext } from '../web-context.js';
import { notUtf8, utf8Body } from '../json-body.js';
import { infiniteNumber } from '../json-numbers.js';

/** The JSON-lines types a client may send; each line one message object. */
export const JSON_LINES_TYPES = ['application/x-ndjson', 'application/jsonl'];
/** A batch of 10,000 on a slow disk takes seconds: longer than the pooled connections' timeout for one message. */
const BATCH_TIMEOUT_MS = 120_000;

/** `a syntax error at line 3 column 14 (byte 41): Unexpected token }` of line `i`, its byte counted from the start of the body. */
function lineError(lines: string[], i: number): string {
  const at = locateJsonError(lines[i]);
  const before = lines.slice(0, i).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
  return at ? `a syntax error at line ${i + 1} column ${at.column} (byte ${before + at.byte}): ${at.problem}` : `line ${i + 1}, which does not parse`;
}

/** Parses JSON lines into an array (blank lines skipped), naming the line, column and byte of a bad one. */
export function installJsonLines(app: FastifyInstance, bodyLimit: number): void {
  app.addContentTypeParser(JSON_LINES_TYPES, { parseAs: 'buffer', bodyLimit }, (_req, body, done) => {
    const text = utf8Body(body as Buffer);
    if (text === null) return done(notUtf8(), undefined);
    const out: unknown[] = [];
    const lines = text.split('\n');
    for (const [i, line] of lines.entries()) {
      if (line.trim() === '') continue;
      // Refused here, before a 16 MiB body of `{}` lines becomes millions of objects on their way to a certain refusal.
      if (out.length === MAX_CREATE_BATCH) {
        done(RqError.of('RQ_ERR_BAD_BODY', `at most ${MAX_CREATE_BATCH} message lines`, `line ${i + 1}, message ${MAX_CREATE_BATCH + 1}`), undefined);
        return;
      }
      try {
        out.push(JSON.parse(line));
      } catch {
        done(RqError.of('RQ_ERR_BAD_BODY', 'one JSON object per line', lineError(lines, i)), undefined);
        return;
      }
      const infinite = infiniteNumber(out[out.length - 1], `line ${i + 1}`);
      if (infinite) return done(infinite, undefined);
    }
    done(null, out);
  });
}

/** What the relay queue carries a message to: a queue on another host, or a pool of this host's fleet. */
const RELAY_DEST = 'an http(s)://host[:port][/root]/q/<queue> URL or fleet:<queue> (where the relay delivers the message)';

/**
 * The `dest` a batch message is made with. In the relay queue each message's own, a URL or a pool,
 * since there the dest is where it goes, not the queue it is made in; the queue then checks the URL
 * or the pool as it checks a single create's, so a dest the relay could never deliver is refused, not failed at its run.
 * Anywhere else, the queue of the URL: a `dest` may be left out or name it, nothing else.
 */
function batchDest(queue: string, dest: unknown): string {
  if (queue !== RELAY_QUEUE) {
    if (dest !== undefined && dest !== queue) throw invalidField('dest', `${shown(queue)} (the queue of the URL) or none`, dest);
    return queue;
  }
  if (typeof dest !== 'string' || !isRelayedDest(dest)) throw invalidField('dest', RELAY_DEST, dest);
  // The queue checks the rest, as for a single create: a URL's /q/<queue> and name, a pool against the fleet.
  return dest;
}

/** The body's messages, each with its dest (batchDest). A message without a trace context of its own takes the request's headers'. */
function batchOf(req: FastifyRequest, queue: string): Record<string, unknown>[] {
  const body = req.body;
  if (!Array.isArray(body))
    throw RqError.of('RQ_ERR_BAD_BODY', `a JSON array of message objects (application/json) or JSON lines (${JSON_LINES_TYPES.join(', ')})`, shown(body));
  if (body.length > MAX_CREATE_BATCH) throw invalidField('messages', `an array of 1 to ${MAX_CREATE_BATCH} message objects`, counted(body.length, 'messages'));
  const budget = typoBudget();
  return body.map((m, i) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m))
      throw RqError.of('RQ_ERR_BATCH_MESSAGE', i, invalidField('message', 'a JSON object of message fields', m).message);
    let dest: string;
    try {
      dest = batchDest(queue, (m as Record<string, unknown>).dest);
      refuseFieldNames(m as Record<string, unknown>, '', budget);
    } catch (err) {
      throw RqError.of('RQ_ERR_BATCH_MESSAGE', i, (err as Error).message);
    }
    return withHeaderTrace(req, { ...m, dest });
  });
}

/**
 * The report of a batch some of whose messages the queue could not make (a full disk mid-batch):
 * every failure by its index and reason, every id made by its index. Null when all were made.
 */
export function batchReport(replies: Answer<string>[]): PartialReport | null {
  const report: PartialReport = { total: replies.length, done: 0, failed: 0, failures: [], ids: [] };
  replies.forEach((a, index) => {
    if (a.ok) {
      report.done += 1;
      report.ids!.push({ index, id: a.value });
    } else {
      report.failed += 1;
      report.failures.push({ index, reason: a.text, code: a.code });
    }
  });
  return report.failed ? report : null;
}

export function batchApi(ctx: WebContext) {
  return {
    /** The route's onRequest hook: a body the parser refuses (a bad line) is answered in JSON too. */
    async answersJson(req: FastifyRequest) {
      ctx.markJson(req);
    },

    /**
     * POST /q/<q>/new_messages: `["ok", [["ok", full id], …]]` in order, or the whole batch refused
     * naming the bad message. When the queue made some and failed others, never a 200: the first
     * failure's status (507 for a full disk) with `["fail", text, report]`.
     */
    async newMessages(req: FastifyRequest, reply: FastifyReply) {
      const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
      const messages = batchOf(req, q);
      try {
        const a = await QueueClient.oneShot(queuePaths(ctx.deps.root, q).sock, { timeoutMs: BATCH_TIMEOUT_MS }).createMany(messages);
        const report = a.ok ? batchReport(a.value) : null;
        if (report) return ctx.json(reply, partialReply('created', report), partialStatus(report));
        return ctx.answerJson(reply, a);
      } catch (err) {
        if (!isRqError(err, 'RQ_ERR_NO_REPLY')) throw err;
        // Never sent: nothing was made, a plain retry is safe. Sent: some may be; keys make a retry safe.
        if (!mayHaveArrived(err)) return ctx.json(reply, ['fail', `queue ${q} did not answer (nothing was created): ${err.message}`], 503);
        return ctx.json(
          reply,
          ['fail', `queue ${q} took the batch but did not answer in time: messages sent with an idempotency_key can be sent again safely`],
          504,
        );
      }
    },
  };
}
