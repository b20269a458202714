// A floor that serves rq1 frames on a unix socket (bench/fixtures/: enqueue-floor.c, spawn-floor.c --socket, spawn-floor-node.mjs): started, waited for until it listens, stopped.
import { spawn } from 'node:child_process';
import { once } from 'node:events';

export interface FloorServer {
  /** Its pid, for its CPU time (lib.ts cpuMs). */
  pid: number;
  stop(): Promise<void>;
}

/** Starts `bin args` and resolves once it printed `listening` (its socket is bound); its stderr goes to this process's. */
export async function startFloorServer(bin: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<FloorServer> {
  const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${bin} exited with ${code} before listening`)));
    child.stdout.on('data', (s: string) => {
      out += s;
      if (out.startsWith('listening\n')) resolve();
    });
  });
  return {
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = once(child, 'exit');
      child.kill('SIGTERM');
      await gone;
    },
  };
}
