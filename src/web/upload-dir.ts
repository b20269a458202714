// Picks where uploads land: a directory on the same filesystem as queues/, so attaching is a hard link.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';

const UPLOAD_RE = /^rq-upload-(\d+)-/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function device(dir: string): Promise<number | null> {
  try {
    const st = await fs.stat(dir);
    if (!st.isDirectory()) return null;
    await fs.access(dir, fs.constants.W_OK);
    return st.dev;
  } catch {
    return null;
  }
}

/**
 * config.tmpdir (or the system temp dir) when it shares queues/'s filesystem; otherwise
 * queues/.uploads, which always does. Uploads left by a dead web process are removed.
 */
export async function chooseUploadDir(queuesDir: string, tmpdir: string | undefined, log: Logger): Promise<string> {
  const queuesDev = await device(queuesDir);
  let chosen: string | null = null;
  for (const candidate of [tmpdir, os.tmpdir()]) {
    if (!candidate) continue;
    if (queuesDev !== null && (await device(candidate)) === queuesDev) {
      chosen = path.resolve(candidate);
      break;
    }
  }
  if (!chosen) {
    chosen = path.join(queuesDir, '.uploads');
    await fs.mkdir(chosen, { recursive: true, mode: 0o700 });
    log.info({ dir: chosen, tmpdir }, 'tmpdir is not on the filesystem of queues/: uploads go to queues/.uploads');
  }
  for (const name of await fs.readdir(chosen).catch(() => [] as string[])) {
    const m = UPLOAD_RE.exec(name);
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) await fs.rm(path.join(chosen, name), { force: true });
  }
  return chosen;
}
