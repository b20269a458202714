// A C floor that serves rq1 frames on a unix socket (bench/fixtures/*-floor.c with a SOCKET argument): started, waited for until it listens, stopped.
import { spawn } from 'node:child_process';
import { once } from 'node:events';

export interface FloorServer {
  /** Its stdout so far, after the `listening` line: what it printed of each request. */
  lines(): string[];
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
    lines: () => out.split('\n').slice(1, -1),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = once(child, 'exit');
      child.kill('SIGTERM');
      await gone;
    },
  };
}
