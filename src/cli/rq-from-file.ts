// rq sendmesg --from-file: a file of messages (JSON lines, or one JSON array), checked whole before any is sent, then sent in create_messages batches.
import fs from 'node:fs/promises';
import path from 'node:path';
import { RqError, shown } from '../errors.js';
import type { Answer } from '../ipc/answer.js';
import { mayHaveArrived } from '../ipc/socket-client.js';
import { refuseFieldNames, typoBudget } from '../message/create-fields.js';
import { checkBatchMode, normaliseCreate } from '../message/message.js';
import { traceFrom, withoutTrace } from '../message/trace-context.js';
import type { OptionSpec } from './command-spec.js';
import { EXIT, exitFor } from './exit-codes.js';
import { ask, replyLine } from './queue-ask.js';
import type { RqIo } from './rq-command.js';
import type { OptionValue } from '../args.js';
import { usage } from './rq-options.js';
import { visible } from './visible-text.js';

export const FROM_FILE: OptionSpec = {
  name: 'from-file',
  arg: 'FILE',
  help: 'send every message of FILE (JSON lines, or one JSON array; - reads stdin), the other message options as defaults for each; all are checked before any is sent',
};

/** Messages per create_messages: big enough that one group commit covers many, small enough to answer well inside the reply timeout. */
const BATCH = 2000;
/**
 * And at most this much JSON per batch: 2,000 messages of 64 KiB would make one request of 125 MiB,
 * past the socket's frame limit and held whole in the queue process's memory.
 */
const BATCH_BYTES = 4 << 20;
/** Batches in flight: the queue makes one while this process parses the reply of the other. */
const IN_FLIGHT = 2;
const BATCH_TIMEOUT_MS = 300_000;

interface Item {
  /** Where it came from, for refusals: `file:line` or `file[index]`. */
  where: string;
  fields: Record<string, unknown>;
}

async function readSource(file: string, io: RqIo): Promise<string> {
  if (file === '-') {
    if (!io.readStdin) throw usage('--from-file -: expected a standard input to read');
    return io.readStdin();
  }
  try {
    return await fs.readFile(path.resolve(io.cwd, file), 'utf8');
  } catch (err) {
    throw usage(`--from-file: cannot read ${shown(file)} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** Each message with the command line's options as defaults; refuses (naming the line) anything the queue would refuse by its fields alone. */
export function readMessages(text: string, name: string, defaults: Record<string, OptionValue>): Item[] {
  const raw: { where: string; value: unknown }[] = [];
  // A byte order mark (some editors write one) is no part of the JSON.
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  if (text.trimStart().startsWith('[')) {
    let list: unknown;
    try {
      list = JSON.parse(text);
    } catch (err) {
      throw usage(`${name}: expected a JSON array of message objects (${(err as Error).message})`);
    }
    (list as unknown[]).forEach((value, i) => raw.push({ where: `${name}[${i}]`, value }));
  } else {
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        raw.push({ where: `${name}:${i + 1}`, value: JSON.parse(line) });
      } catch (err) {
        throw usage(
          `${name}:${i + 1}: expected a JSON object per line (${(err as Error).message}); a file with a message over several lines must be one JSON array`,
        );
      }
    });
  }
  if (raw.length === 0) throw usage(`${name}: expected at least one message, received none`);
  const budget = typoBudget();
  return raw.map(({ where, value }) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw usage(`${where}: expected a JSON object of message fields, received ${shown(value)}`);
    // A misspelt field (`memroy_max`) is refused as POST new_messages refuses it, not sent without it.
    try {
      refuseFieldNames(value as Record<string, unknown>, '', budget);
    } catch (err) {
      if (err instanceof RqError) throw usage(`${where}: ${err.message}`);
      throw err;
    }
    // The message's own trace context, else the command's (its flags or environment), never a field of each.
    const fields: Record<string, unknown> = { ...withoutTrace(defaults), ...value };
    Object.assign(
      fields,
      traceFrom(fields, () => defaults),
    );
    if (fields.dest !== defaults.dest)
      throw usage(`${where}: dest: expected ${shown(defaults.dest)} (the --dest of the command) or none, received ${shown(fields.dest)}`);
    try {
      checkBatchMode(fields);
      normaliseCreate(fields);
    } catch (err) {
      if (err instanceof RqError) throw usage(`${where}: ${err.message}`);
      throw err;
    }
    return { where, fields };
  });
}

/** Lines as one write where the io can (a pipe takes 100,000 of them without a call each), made visible as stdout's are. */
async function write(io: RqIo, lines: string[]): Promise<void> {
  if (io.write) await io.write(lines.map((l) => `${visible(l)}\n`).join(''));
  else for (const l of lines) io.stdout(l);
}

/** The items in file order, cut at BATCH messages or BATCH_BYTES of JSON, whichever comes first. */
function batchesOf(items: Item[]): Item[][] {
  const out: Item[][] = [];
  let cur: Item[] = [];
  let bytes = 0;
  for (const it of items) {
    const n = Buffer.byteLength(JSON.stringify(it.fields));
    if (cur.length && (cur.length >= BATCH || bytes + n > BATCH_BYTES)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(it);
    bytes += n;
  }
  if (cur.length) out.push(cur);
  return out;
}

/** `file:2001 to file:4000`: where a batch's messages are in the file. */
const span = (b: Item[]) => `${b[0].where} to ${b[b.length - 1].where}`;

/**
 * Sends the file's messages to `queue` and prints one classic reply line per message, in file order.
 * A batch the queue refuses (a limit or a dependency it checks itself) stops the sending; the batch
 * already in flight after it is still answered and printed, so the `ok` lines are exactly the
 * messages made. A batch whose reply is lost may be made in part: the text says which lines. A
 * message the queue took but could not make (a full disk) has its `fail` line in order, is named
 * by its line on stderr, and the exit is 1 with the count of those made and not.
 */
export async function sendFromFile(o: { file: string; queue: string; root: string; defaults: Record<string, OptionValue>; io: RqIo }): Promise<number> {
  const name = o.file === '-' ? 'stdin' : o.file;
  const items = readMessages(await readSource(o.file, o.io), name, o.defaults);
  const batches = batchesOf(items);
  const replies: Promise<Answer<Answer<string>[]>>[] = [];
  const send = (b: Item[]) => {
    const p = ask(o.root, o.queue, (c) => c.createMany(b.map((it) => it.fields)), BATCH_TIMEOUT_MS);
    // A batch sent ahead may fail while an earlier one is awaited: its failure is read in its turn.
    p.catch(() => undefined);
    return p;
  };
  let made = 0;
  /** Where each message the queue could not make came from, and why (a full disk mid-batch). */
  const failures: string[] = [];
  const printed = async (a: Answer<string>[], batch: Item[]) => {
    await write(o.io, a.map(replyLine));
    a.forEach((one, i) => (one.ok ? (made += 1) : failures.push(`${batch[i].where}: ${one.text}`)));
  };
  // The fail lines on stdout keep file order; stderr says which messages of the file they are.
  const listFailures = () => failures.forEach((f) => o.io.stderr(`rq: ${f}`));
  /** The answers of the batches sent after batch `next`, printed; the text naming those that got none. */
  const rest = async (next: number): Promise<string> => {
    const lost: string[] = [];
    for (const [k, late] of replies.slice(next + 1).entries()) {
      const r = await late.catch(() => null);
      if (r?.ok) await printed(r.value, batches[next + 1 + k]);
      else if (r === null) lost.push(span(batches[next + 1 + k]));
    }
    return lost.length ? `; no answer either for ${lost.join(', ')}` : '';
  };
  for (let next = 0; next < batches.length; next++) {
    while (replies.length < next + IN_FLIGHT && replies.length < batches.length) replies.push(send(batches[replies.length]));
    let a: Answer<Answer<string>[]>;
    try {
      a = await replies[next];
    } catch (err) {
      const more = await rest(next);
      const fate = mayHaveArrived(err) ? 'may be made in part (an idempotency_key in each message makes sending them again safe)' : 'were not sent';
      listFailures();
      o.io.stderr(`rq: ${(err as Error).message}: the messages from ${span(batches[next])}${more} ${fate}; ${made} messages were made, the ok lines printed`);
      return exitFor(err);
    }
    if (!a.ok) {
      // A batch refused for one of its messages names it by index (the refusal's detail): said here by its line.
      const at = a.code === 'RQ_ERR_BATCH_MESSAGE' ? a.detail : undefined;
      const one = typeof at?.index === 'number' ? batches[next][at.index] : undefined;
      const why = one && typeof at?.reason === 'string' ? `${one.where}: ${at.reason}` : a.text;
      const more = await rest(next);
      listFailures();
      o.io.stderr(`rq: ${why} (none of the messages from ${span(batches[next])} was made${more}; ${made} messages were made, the ok lines printed)`);
      return EXIT.fail;
    }
    await printed(a.value, batches[next]);
    if (o.io.tty?.stderr) o.io.progress?.(`${made + failures.length} of ${items.length} messages sent`);
  }
  if (o.io.tty?.stderr) o.io.progress?.('');
  if (failures.length === 0) return EXIT.ok;
  listFailures();
  o.io.stderr(`rq: ${failures.length} of ${items.length} messages were not made (listed above); ${made} were made, the ok lines printed`);
  return EXIT.fail;
}
