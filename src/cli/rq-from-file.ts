// rq sendmesg --from-file: a file of messages (JSON lines, or one JSON array), checked whole before any is sent, then sent in create_messages batches.
import fs from 'node:fs/promises';
import path from 'node:path';
import { RqError, shown } from '../errors.js';
import type { Answer } from '../ipc/answer.js';
import { normaliseCreate } from '../message/message.js';
import type { OptionSpec } from './command-spec.js';
import { EXIT } from './exit-codes.js';
import { ask, replyLine } from './queue-ask.js';
import type { RqIo } from './rq-commands.js';
import type { OptionValue } from '../args.js';
import { usage } from './rq-options.js';

export const FROM_FILE: OptionSpec = {
  name: 'from-file',
  arg: 'FILE',
  help: 'send every message of FILE (JSON lines, or one JSON array; - reads stdin), the other message options as defaults for each; all are checked before any is sent',
};

/** Messages per create_messages: big enough that one group commit covers many, small enough to answer well inside the reply timeout. */
const BATCH = 2000;
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
        throw usage(`${name}:${i + 1}: expected a JSON object per line (${(err as Error).message})`);
      }
    });
  }
  if (raw.length === 0) throw usage(`${name}: expected at least one message, received none`);
  return raw.map(({ where, value }) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw usage(`${where}: expected a JSON object of message fields, received ${shown(value)}`);
    const fields = { ...defaults, ...value } as Record<string, unknown>;
    if (fields.dest !== defaults.dest) throw usage(`${where}: dest: expected ${shown(defaults.dest)} (the --dest of the command) or none, received ${shown(fields.dest)}`);
    try {
      normaliseCreate(fields);
    } catch (err) {
      if (err instanceof RqError) throw usage(`${where}: ${err.message}`);
      throw err;
    }
    return { where, fields };
  });
}

/** Lines as one write where the io can (a pipe takes 100,000 of them without a call each). */
async function write(io: RqIo, lines: string[]): Promise<void> {
  if (io.write) await io.write(lines.map((l) => `${l}\n`).join(''));
  else for (const l of lines) io.stdout(l);
}

/**
 * Sends the file's messages to `queue` and prints one classic reply line per message, in file order.
 * A batch the queue refuses (a limit or a dependency it checks itself) stops the sending: the lines
 * already printed are the messages made, the refusal names the message's place in the file.
 */
export async function sendFromFile(o: { file: string; queue: string; root: string; defaults: Record<string, OptionValue>; io: RqIo }): Promise<number> {
  const name = o.file === '-' ? 'stdin' : o.file;
  const items = readMessages(await readSource(o.file, o.io), name, o.defaults);
  const batches: Item[][] = [];
  for (let i = 0; i < items.length; i += BATCH) batches.push(items.slice(i, i + BATCH));
  const replies: Promise<Answer<Answer<string>[]>>[] = [];
  const send = (b: Item[]) => {
    const p = ask(o.root, o.queue, (c) => c.createMany(b.map((it) => it.fields)), BATCH_TIMEOUT_MS);
    // A batch sent ahead may fail while an earlier one is awaited: its failure is read in its turn.
    p.catch(() => undefined);
    return p;
  };
  let sent = 0;
  let failed = 0;
  for (let next = 0; next < batches.length; next++) {
    while (replies.length < next + IN_FLIGHT && replies.length < batches.length) replies.push(send(batches[replies.length]));
    const a = await replies[next];
    if (!a.ok) {
      // Later batches may be in flight: their messages are made, and told, before stopping.
      const at = /^messages\[(\d+)\]: ([^]*)$/.exec(a.text);
      o.io.stderr(`rq: ${at ? `${batches[next][Number(at[1])].where}: ${at[2]}` : a.text} (${sent} of ${items.length} messages sent before it; none of this batch of ${batches[next].length})`);
      for (const late of replies.slice(next + 1)) {
        const r = await late.catch(() => null);
        if (r?.ok) await write(o.io, r.value.map(replyLine));
      }
      return EXIT.fail;
    }
    await write(o.io, a.value.map(replyLine));
    sent += a.value.length;
    failed += a.value.filter((one) => !one.ok).length;
    if (o.io.tty?.stderr) o.io.progress?.(`${sent} of ${items.length} messages sent`);
  }
  if (o.io.tty?.stderr) o.io.progress?.('');
  return failed === 0 ? EXIT.ok : EXIT.fail;
}
