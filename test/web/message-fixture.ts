// Test data the web sweeps point their routes at: a finished message with an attachment and a job log.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '../helpers/rq-root.js';
import { STATS_DIR, waitState } from './web-root.js';

export interface AttachedMessage {
  id: string;
  /** The attachment's file name and exact bytes. */
  name: string;
  bytes: Buffer;
  /** The message directory's job/stdio.log, once the message is done. */
  logFile: string;
}

export const md5 = (b: Buffer | Uint8Array): string => crypto.createHash('md5').update(b).digest('hex');

/** Every byte value, several times over: a body that shows any off-by-one or text re-encoding. */
export const ALL_BYTES = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7) % 256));

/** POSTs `mesg` as x_format json and returns the reply array. */
export async function postMessage(base: string, queue: string, mesg: Record<string, unknown>, headers: Record<string, string> = {}): Promise<unknown[]> {
  const res = await fetch(`${base}/q/${queue}/new_message`, { method: 'POST', headers, body: new URLSearchParams({ mesg: JSON.stringify(mesg) }) });
  return (await res.json()) as unknown[];
}

/** Uploads `bytes` as `name` to a prep message (attach/new, multipart, x_format json); returns the reply. */
export async function attach(base: string, queue: string, id: string, name: string, bytes: Buffer, headers: Record<string, string> = {}): Promise<unknown[]> {
  const fd = new FormData();
  fd.set('x_format', 'json');
  fd.set('filedata', new Blob([new Uint8Array(bytes)]), name);
  const res = await fetch(`${base}/q/${queue}/${id}/attach/new`, { method: 'POST', headers, body: fd });
  return (await res.json()) as unknown[];
}

/**
 * Creates a message in prep with `fields`, attaches `bytes` as `name`, commits it and waits until it
 * is done, so every `:q/:id/attach/:name` and `:q/:id/log/:file` route has a real file behind it.
 */
export async function attachedDoneMessage(
  base: string,
  root: string,
  queue: string,
  opts: { fields?: Record<string, unknown>; name?: string; bytes?: Buffer; headers?: Record<string, string> } = {},
): Promise<AttachedMessage> {
  const headers = opts.headers ?? {};
  const name = opts.name ?? 'data.bin';
  const bytes = opts.bytes ?? ALL_BYTES;
  const created = await postMessage(base, queue, { dest: queue, param1: 'done', ...opts.fields, _method: 'prep' }, headers);
  if (created[0] !== 'ok') throw new Error(`prep message: ${JSON.stringify(created)}`);
  const id = String(created[1]).split('/').pop()!;
  const attached = await attach(base, queue, id, name, bytes, headers);
  if (attached[0] !== 'ok') throw new Error(`attach: ${JSON.stringify(attached)}`);
  const commit = await fetch(`${base}/q/${queue}/${id}`, { method: 'POST', headers, body: new URLSearchParams({ _method: 'commit', x_format: 'json' }) });
  if (commit.status !== 200) throw new Error(`commit: ${commit.status} ${await commit.text()}`);
  await waitState(base, queue, id, ['done'], { headers });
  const msg = (await (await fetch(`${base}/q/${queue}/${id}.json`, { headers })).json()) as { path: string };
  return { id, name, bytes, logFile: path.join(root, msg.path, 'job', 'stdio.log') };
}

/**
 * Every path under the root's queues/ and config/ with a hash of its contents (symlinks: their
 * target), to prove a batch of requests changed nothing. Sockets and pid files are the running
 * processes' own and are left out, and so is an empty create-journal segment (a checkpoint makes
 * the next one ahead: it holds nothing).
 */
export async function contentSnapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(dir: string): Promise<void> {
    for (const e of await fs.readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      const rel = path.relative(root, p);
      if (e.name.endsWith('.sock') || e.name.endsWith('.pid')) continue;
      if (path.basename(dir) === 'journal' && e.isFile() && (await fs.stat(p)).size === 0) continue;
      // A queue's statistics are written on their own 10 s clock (rq-beyond §B15.2): not state a request may change.
      if (STATS_DIR.test(p)) continue;
      if (e.isSymbolicLink()) out[rel] = `-> ${await fs.readlink(p)}`;
      else if (e.isDirectory()) {
        out[`${rel}/`] = 'dir';
        await walk(p);
      } else
        out[rel] = crypto
          .createHash('sha256')
          .update(await fs.readFile(p))
          .digest('hex');
    }
  }
  for (const top of ['queues', 'config']) await walk(path.join(root, top));
  return out;
}

/**
 * Every file of queue `q` by content, but the blank-dir pool a create refills in the background. Taken
 * once the create journal holds no record: a create is answered once its record is durable, and the
 * checkpoint that deletes the segment comes after, on its own clock (under load it came between a
 * "before" and an "after" snapshot: one entry fewer, with nothing refused having written).
 */
export async function queueFiles(root: string, q: string): Promise<[string, string][]> {
  const journal = path.join(root, 'queues', q, 'journal');
  const records = async () => {
    const sizes = await Promise.all(
      (await fs.readdir(journal).catch(() => [])).map(async (f) => (await fs.stat(path.join(journal, f)).catch(() => ({ size: 0 }))).size),
    );
    return sizes.some((n) => n > 0);
  };
  await waitFor(async () => !(await records()), `the journal of ${q} to be checkpointed`);
  return Object.entries(await contentSnapshot(root)).filter(([p]) => p.startsWith(`queues/${q}/`) && !p.startsWith(`queues/${q}/.blank/`));
}
