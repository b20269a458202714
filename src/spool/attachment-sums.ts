// The md5 rq computed when it stored an attachment, kept beside it (`attach/.<name>.md5`) so that no view of the message reads the file again.
import type fs from 'node:fs';
import type fsp from 'node:fs/promises';
import { createHash } from '../lazy-builtins.js';
import { MAX_ATTACHMENT_NAME_BYTES } from '../message/names.js';
import type { SafeDir } from './beneath.js';
import type { SpoolFs } from './spool-fs.js';

/** What the sum was computed on: a file whose inode, size or mtime differ since is another file. */
interface SumRecord {
  md5: string;
  size: number;
  ino: string;
  mtime_ns: string;
}

/** The sum's file of an attachment: a dot name, so never an attachment name itself and never listed. */
export function sumName(name: string): string {
  return `.${name}.md5`;
}

/**
 * Whether a sum is kept for `name`: its file and that file's temp name (`.<name>.md5.tmp`) fit in a
 * file name's 255 bytes. A longer name (up to 255 bytes, as the classic daemon stored) keeps none:
 * its md5 is computed when a view asks (LazySums), as for a file a script left.
 */
export function keepsSum(name: string): boolean {
  return Buffer.byteLength(`${sumName(name)}.tmp`) <= MAX_ATTACHMENT_NAME_BYTES;
}

/** The record to keep for `md5` of the file whose lstat is `st`. */
export function sumRecord(md5: string, st: fs.BigIntStats): string {
  const rec: SumRecord = { md5, size: Number(st.size), ino: String(st.ino), mtime_ns: String(st.mtimeNs) };
  return JSON.stringify(rec);
}

/** Writes the record beside the attachment (temp name + rename: a reader sees the old record or the new one). */
export async function writeSum(attachDir: string, name: string, md5: string, st: fs.BigIntStats, sfs: SpoolFs): Promise<void> {
  if (!keepsSum(name)) return;
  const final = `${attachDir}/${sumName(name)}`;
  const tmp = `${final}.tmp`;
  const fh = await sfs.open(tmp, 'w', 0o644);
  try {
    await fh.writeFile(sumRecord(md5, st));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await sfs.rename(tmp, final);
}

const MAX_RECORD_BYTES = 512;

/** The kept md5 of attachment `name` whose lstat is `st`, or null when none was kept for this very file. */
export async function keptSum(dir: SafeDir, name: string, st: fs.BigIntStats): Promise<string | null> {
  let text: string;
  try {
    const { fh, stat } = await dir.openFile(sumName(name));
    try {
      if (stat.size > MAX_RECORD_BYTES) return null;
      text = (await fh.readFile('utf8')).slice(0, MAX_RECORD_BYTES);
    } finally {
      await fh.close();
    }
  } catch {
    return null;
  }
  try {
    const rec = JSON.parse(text) as Partial<SumRecord>;
    const same = rec.size === Number(st.size) && rec.ino === String(st.ino) && rec.mtime_ns === String(st.mtimeNs);
    return same && typeof rec.md5 === 'string' && /^[0-9a-f]{32}$/.test(rec.md5) ? rec.md5 : null;
  } catch {
    return null;
  }
}

/** md5 of the first `size` bytes of an open file, read in chunks (each a thread-pool trip, so the loop serves others between them). */
export async function md5Handle(fh: fsp.FileHandle, size: number): Promise<string> {
  const hash = createHash('md5');
  const buf = Buffer.allocUnsafe(Math.min(size, 1 << 20) || 1);
  for (let at = 0; at < size;) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - at), at);
    if (bytesRead === 0) break;
    hash.update(buf.subarray(0, bytesRead));
    at += bytesRead;
  }
  return hash.digest('hex');
}

/**
 * Sums of files a script left in attach/ (rq never stored them, so none was kept), computed once
 * each and remembered by inode, size and mtime; only files up to `maxBytes` are read at all.
 */
export class LazySums {
  private readonly sums = new Map<string, string>();

  constructor(
    /** 16 MiB: about 30 ms of md5, once per file; larger files a script left show no md5. */
    readonly maxBytes = 16 * 1024 * 1024,
    private readonly maxEntries = 1000,
  ) {}

  private static key(st: fs.BigIntStats): string {
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}`;
  }

  /** The md5 of `name` (a regular file whose lstat is `st`), or null when it is larger than the bound or changed while read. */
  async of(dir: SafeDir, name: string, st: fs.BigIntStats): Promise<string | null> {
    if (st.size > BigInt(this.maxBytes)) return null;
    const key = LazySums.key(st);
    const known = this.sums.get(key);
    if (known !== undefined) return known;
    let md5: string;
    try {
      const { fh, stat } = await dir.openFile(name);
      try {
        if (LazySums.key(stat) !== key) return null;
        md5 = await md5Handle(fh, Number(stat.size));
        if (LazySums.key(await fh.stat({ bigint: true })) !== key) return null;
      } finally {
        await fh.close();
      }
    } catch {
      return null;
    }
    if (this.sums.size >= this.maxEntries) this.sums.delete(this.sums.keys().next().value as string);
    this.sums.set(key, md5);
    return md5;
  }
}
