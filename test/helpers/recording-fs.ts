// A SpoolFs that logs every disk-changing call with its path, so tests can assert the order of writes, renames and fsyncs.
import path from 'node:path';
import { type SpoolFile, type SpoolFs, nodeSpoolFs } from '../../src/spool/spool-fs.js';

export interface RecordingFs {
  fs: SpoolFs;
  /**
   * One line per completed call, `<op> <path>` (`rename <from> -> <to>`), paths relative to the
   * base. An fsync logs `fsync` when issued and `fsynced` when done: a durability barrier covers
   * only what completed before it was issued, and a caller may be answered only after it is done.
   * Calls that fail are not logged: the log says what happened to the disk.
   */
  log: string[];
  /** Puts a line of the test's own into the log (a promise settling, a call being made). */
  mark(line: string): void;
  /** The lines whose first word is one of `words` (an op, or a mark's first word). */
  only(...words: string[]): string[];
  clear(): void;
}

/** Where an open file or directory is now: renames of it or of a directory above it move it. */
interface Open {
  path: string;
}

/** Records the calls it passes on to `real` (the disk by default). */
export function recordingFs(base: string, real: SpoolFs = nodeSpoolFs): RecordingFs {
  const log: string[] = [];
  const fds = new Map<number, Open>();
  const live = new Set<Open>();
  const rel = (p: string) => path.relative(base, p) || '.';
  const note = (op: string, p: string) => void log.push(`${op} ${rel(p)}`);
  const opened = (p: string): Open => {
    const o = { path: p };
    live.add(o);
    return o;
  };
  const renamed = (from: string, to: string) => {
    log.push(`rename ${rel(from)} -> ${rel(to)}`);
    for (const o of live) {
      if (o.path === from || o.path.startsWith(from + path.sep)) o.path = to + o.path.slice(from.length);
    }
  };
  const synced = async (o: Open, sync: () => Promise<void>) => {
    note('fsync', o.path);
    await sync();
    note('fsynced', o.path);
  };
  const handle = (fh: SpoolFile, o: Open): SpoolFile => ({
    writeFile: async (data) => {
      await fh.writeFile(data);
      note('write', o.path);
    },
    write: (async (data: string | Uint8Array, a: number, b?: number, c?: number) => {
      const r = b === undefined ? await fh.write(data as string, a) : await fh.write(data as Uint8Array, a, b, c);
      note('write', o.path);
      return r;
    }) as SpoolFile['write'],
    truncate: async (len) => {
      await fh.truncate(len);
      note('truncate', o.path);
    },
    stat: () => fh.stat(),
    sync: () => synced(o, () => fh.sync()),
    datasync: () => synced(o, () => fh.datasync()),
    close: async () => {
      live.delete(o);
      await fh.close();
      note('close', o.path);
    },
  });

  const fs: SpoolFs = {
    open: async (p, flags, mode) => {
      const fh = await real.open(p, flags, mode);
      note('open', p);
      return handle(fh, opened(p));
    },
    mkdir: async (p, options) => {
      const first = await real.mkdir(p, options);
      note('mkdir', p);
      return first;
    },
    rename: async (from, to) => {
      await real.rename(from, to);
      renamed(from, to);
    },
    link: async (existing, p) => {
      await real.link(existing, p);
      note('link', p);
    },
    unlink: async (p) => {
      await real.unlink(p);
      note('unlink', p);
    },
    rm: async (p, options) => {
      await real.rm(p, options);
      note('rm', p);
    },
    fsync: (fd) => synced(fds.get(fd) ?? { path: `<fd ${fd}>` }, () => real.fsync(fd)),
    syncfs: async (p) => {
      note('syncfs', p);
      await real.syncfs(p);
      note('syncfsed', p);
    },
    openSync: (p, flags, mode) => {
      const fd = real.openSync(p, flags, mode);
      fds.set(fd, opened(p));
      note('open', p);
      return fd;
    },
    writeFileSync: (fd, data) => {
      real.writeFileSync(fd, data);
      note('write', fds.get(fd)?.path ?? `<fd ${fd}>`);
    },
    ftruncateSync: (fd, len) => {
      real.ftruncateSync(fd, len);
      note('truncate', fds.get(fd)?.path ?? `<fd ${fd}>`);
    },
    renameSync: (from, to) => {
      real.renameSync(from, to);
      renamed(from, to);
    },
    mkdirSync: (p, o) => {
      real.mkdirSync(p, o);
      note('mkdir', p);
    },
    rmdirSync: (p) => {
      real.rmdirSync(p);
      note('rmdir', p);
    },
    rmSync: (p, o) => {
      real.rmSync(p, o);
      note('rm', p);
    },
    closeSync: (fd) => {
      const o = fds.get(fd);
      real.closeSync(fd);
      fds.delete(fd);
      if (o) live.delete(o);
      note('close', o?.path ?? `<fd ${fd}>`);
    },
  };

  return {
    fs,
    log,
    mark: (line) => void log.push(line),
    only: (...words) => log.filter((l) => words.includes(l.split(' ', 1)[0])),
    clear: () => void (log.length = 0),
  };
}
