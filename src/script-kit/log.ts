// Log lines of the built-in scripts: `<pid> - <UTC time> - <text>` on stdout, which the queue appends to job/stdio.log.
import fs from 'node:fs';

export type ScriptLog = (text: string) => void;

/** A logger writing synchronously to `fd` (stdout): the script may exit right after any line. */
export function scriptLog(fd = 1, now: () => Date = () => new Date()): ScriptLog {
  return (text) => {
    try {
      fs.writeSync(fd, `${process.pid} - ${now().toISOString()} - ${text}\n`);
    } catch {
      // A log that cannot be written must not change the message's outcome.
    }
  };
}
