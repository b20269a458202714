// A SpoolFs whose writes a test refuses with ENOSPC, file by file: what a full filesystem does to rq's writes (removals, renames and truncations still work, as they do on one). Or with another error a failing disk gives (EIO).
import path from 'node:path';
import { type SpoolFile, type SpoolFs, nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { callByCallFs } from './call-by-call-fs.js';

export const noSpace = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/** What a failing disk answers a write (not a want of space: rq does not wait for it to pass). */
export const ioError = (): Error => Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });

/** The name of rq's room probe (queue/status/disk-full.ts roomProbe), for a disk that has room for some writes but not for it. */
export const PROBE_FILE = '.disk-probe';

/**
 * The spool's disk calls with every write that puts bytes into a file (`writeFile`, `write`,
 * `writeFileSync`) refused while `refused(file)` says so, with `fault()` (ENOSPC unless told).
 * The addons' one-trip jobs are left out, so every write passes here.
 */
export function noSpaceFs(refused: (file: string) => boolean, fault: () => Error = noSpace): SpoolFs {
  const guard =
    <A extends unknown[], R>(file: string, f: (...a: A) => Promise<R>) =>
    (...a: A) =>
      refused(file) ? Promise.reject(fault()) : f(...a);
  const wrap = (fh: SpoolFile, file: string): SpoolFile => ({
    writeFile: guard(file, (d) => fh.writeFile(d)),
    write: guard(file, (...a: unknown[]) => (fh.write as (...x: unknown[]) => Promise<never>)(...a)) as SpoolFile['write'],
    truncate: (len) => fh.truncate(len),
    sync: () => fh.sync(),
    datasync: () => fh.datasync(),
    stat: () => fh.stat(),
    close: () => fh.close(),
  });
  const names = new Map<number, string>();
  return {
    ...callByCallFs,
    open: async (p, flags, mode) => wrap(await nodeSpoolFs.open(p, flags, mode), p),
    openSync: (p, flags, mode) => {
      const fd = nodeSpoolFs.openSync(p, flags, mode);
      names.set(fd, p);
      return fd;
    },
    closeSync: (fd) => {
      names.delete(fd);
      nodeSpoolFs.closeSync(fd);
    },
    writeFileSync: (fd, data) => {
      if (refused(names.get(fd) ?? '')) throw fault();
      nodeSpoolFs.writeFileSync(fd, data);
    },
  };
}

/** Whether `file` is the room probe. */
export const isProbe = (file: string): boolean => path.basename(file) === PROBE_FILE;
