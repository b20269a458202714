// execvp's search for a program, done in Node so a launcher can report a missing one before it starts.
import fs from 'node:fs';
import path from 'node:path';

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

/** The file execvp would run for `cmd` from `cwd` with `envPath`, or null when there is none. */
export function findExecutable(cmd: string, cwd: string, envPath: string | undefined): string | null {
  const candidates = cmd.includes('/') ? [path.resolve(cwd, cmd)] : (envPath ?? DEFAULT_PATH).split(':').map((d) => path.resolve(cwd, d || '.', cmd));
  for (const file of candidates) {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // Next candidate.
    }
  }
  return null;
}
