// rq's end of a script's fd 4, where the queue's replies to the script's requests go.
import fs from 'node:fs';
import net from 'node:net';
import type { Writable } from 'node:stream';

/**
 * rq's end of fd 4. Never throws, never emits: a reply the script can no longer read (it closed
 * fd 4, or exited) is dropped, as it would be by the pipe.
 */
export interface ToScript {
  write(text: string): void;
  /** EOF for the script once what was written has gone through. */
  end(): void;
  /** Closes rq's end now; later writes are dropped. */
  destroy(): void;
}

/** A stream as a ToScript: its errors swallowed (EPIPE, a write after its end), so writes once it is closed or broken are dropped. */
export function streamToScript(stream: Writable): ToScript {
  stream.on('error', () => undefined);
  return {
    write: (text) => void stream.write(text),
    end: () => stream.end(),
    destroy: () => stream.destroy(),
  };
}

/** A pipe's write end as a socket on Node's loop: what `lazyToScript` makes on a first reply. */
const pipeSocket = (fd: number): Writable => new net.Socket({ fd, readable: false, writable: true });

/**
 * fd 4 of a native start, made a socket on its first reply only: most scripts never send a
 * request, and a socket made and destroyed for every run cost the queue's main thread ~30 µs a
 * drained message (bench/drain-cpu.ts). Until then the fd is plain, and closing it is one close.
 */
export function lazyToScript(fd: number, open: (fd: number) => Writable = pipeSocket): ToScript {
  let socket: ToScript | null = null;
  let closed = false;
  return {
    write(text) {
      if (!closed) (socket ??= streamToScript(open(fd))).write(text);
    },
    end() {
      if (closed) return;
      closed = true;
      if (socket) socket.end();
      else fs.closeSync(fd);
    },
    destroy() {
      if (socket) socket.destroy();
      else if (!closed) fs.closeSync(fd);
      closed = true;
    },
  };
}
