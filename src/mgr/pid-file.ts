// The supervisor's pid file: single instance, stale files (dead or foreign pid) detected and replaced.
import fs from 'node:fs/promises';

/** The pid in the file if that process is alive and is an rq-mgr, else null. */
export async function livePid(file: string): Promise<number | null> {
  const pid = Number((await fs.readFile(file, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  // A reused pid belongs to some other program: the file is stale.
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  const title = await fs.readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
  return /rq-mgr|mgr-main|rq-init|rq-start/.test(cmdline) || title.includes('rq-mgr') ? pid : null;
}

export async function claimPidFile(file: string): Promise<{ ok: true; release: () => Promise<void> } | { ok: false; pid: number }> {
  const other = await livePid(file);
  if (other !== null && other !== process.pid) return { ok: false, pid: other };
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, `${process.pid}\n`);
  await fs.rename(tmp, file);
  return {
    ok: true,
    release: async () => {
      const now = (await fs.readFile(file, 'utf8').catch(() => '')).trim();
      if (now === String(process.pid)) await fs.rm(file, { force: true });
    },
  };
}
