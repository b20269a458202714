// Writing a whole buffer through a handle whose write(2) may take less than asked (a filling disk, a signal).
import { errnoError } from '../errors.js';

/** The one call this needs, which both fs.FileHandle and SpoolFile have. */
export interface PartialWriter {
  write(buffer: Uint8Array, offset: number, length: number, position?: number): Promise<{ bytesWritten: number }>;
}

/**
 * One write(2) on a disk that fills midway reports the bytes it wrote, short of the whole, and no
 * error: writing on from there gets the ENOSPC, so the caller fails instead of acknowledging a
 * record with its tail missing. At the file's current position, or from byte `at` of the file.
 */
export async function writeAll(handle: PartialWriter, bytes: Uint8Array, at?: number): Promise<void> {
  for (let off = 0; off < bytes.length;) {
    const { bytesWritten } =
      at === undefined ? await handle.write(bytes, off, bytes.length - off) : await handle.write(bytes, off, bytes.length - off, at + off);
    // A regular file never takes nothing without an error; if one did, looping would never end.
    if (bytesWritten === 0) throw errnoError('EIO', 'write took no bytes');
    off += bytesWritten;
  }
}
