// rq's end of a script's fd 3, where the script's lines to the queue come from.
import fs from 'node:fs';
import type { Readable } from 'node:stream';

/** rq's end of fd 3: what the script writes, as it comes, then its end. */
export interface FromScript {
  /** Starts reading: onData with each chunk read, then onEnd once, at EOF, a read error or destroy(). Called once. */
  read(onData: (chunk: Buffer) => void, onEnd: () => void): void;
  /** Stops reading and closes rq's end (a grandchild holding fd 3 open then gets EPIPE); onEnd follows if it has not come. */
  destroy(): void;
}

/** fd 3 bytes handled between two turns of the event loop. */
const YIELD_BYTES = 65_536;

/** A stream as a FromScript: its error ends it like EOF. */
export function streamFromScript(stream: Readable): FromScript {
  return {
    read(onData, onEnd) {
      let handled = 0;
      stream.on('data', (chunk: Buffer) => {
        onData(chunk);
        handled += chunk.length;
        // libuv reads up to 32 × 64 KiB per wake-up: a script writing fd 3 flat out would hold the
        // queue (pings, other runs) for all of it. Past YIELD_BYTES, reading waits for one turn of the loop.
        if (handled < YIELD_BYTES) return;
        handled = 0;
        stream.pause();
        setImmediate(() => stream.resume());
      });
      let ended = false;
      const end = () => {
        if (!ended) onEnd();
        ended = true;
      };
      stream.on('end', end);
      stream.on('close', end);
      stream.on('error', end);
    },
    destroy: () => stream.destroy(),
  };
}

/** An opaque reader made by the native spawner's readPipe(). */
export type PipeHandle = object & { readonly brand: 'PipeHandle' };

/** The native spawner's reader of a pipe (src/queue/launch/native/rq-spawn-read.c). */
export interface PipeReader {
  /** onChunk(Buffer) for each read of at most 64 KiB, one per turn of the loop, then onChunk(null) once at EOF or an error; the fd is then closed. */
  readPipe(fd: number, onChunk: (chunk: Buffer | null) => void): PipeHandle;
  /** Stops reading and closes the fd, with no further onChunk; nothing when it is closed already. */
  closePipe(handle: PipeHandle): void;
}

/**
 * fd 3 of a native start, read by the spawner's own poll: no socket is made, which for a script
 * that writes one line and exits cost more of the queue's main thread than the reading.
 */
export function pipeFromScript(fd: number, reader: PipeReader): FromScript {
  let handle: PipeHandle | null = null;
  let onEnd: (() => void) | null = null;
  let closed = false;
  const end = () => {
    if (closed) return;
    closed = true;
    onEnd?.();
  };
  return {
    read(onData, ended) {
      // Destroyed already: its fd is closed, and the number may be another file's by now.
      if (closed) return void ended();
      onEnd = ended;
      try {
        handle = reader.readPipe(fd, (chunk) => (chunk ? onData(chunk) : end()));
      } catch {
        // Cannot be polled (out of memory; any pipe can be otherwise): read as an empty fd 3, so the run still finishes on its
        // exit, and the script's writes to fd 3 fail (EPIPE) as after any early close.
        fs.closeSync(fd);
        end();
      }
    },
    destroy() {
      if (handle) reader.closePipe(handle);
      else if (!closed) fs.closeSync(fd);
      end();
    },
  };
}
