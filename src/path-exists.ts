// Whether a directory entry exists, asked with lstat: a dangling link is an entry too.
import fsp from 'node:fs/promises';
import { isErrno } from './errors.js';

/** True when `p` names an entry (a link counts, whatever it points to); false when nothing is there; other errors thrown. */
export async function entryExists(p: string): Promise<boolean> {
  try {
    await fsp.lstat(p);
    return true;
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return false;
    throw err;
  }
}
