// What a subcommand of the rq tool is: its entry in the command table, what it is run with, and the standard streams it writes to.
import type { Options } from './rq-options.js';
import type { CommandSpec } from './command-spec.js';

export interface RqIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** Raw text (a job log), resolving once it may be followed by more; `stdout` per chunk when absent. */
  write?: (text: string) => Promise<void>;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Which of the standard streams are terminals: a bulk asks on one, and draws its progress line on one. */
  tty?: { stdin: boolean; stderr: boolean };
  /** Asks a yes/no question on the terminal; true for y or yes. */
  confirm?: (question: string) => Promise<boolean>;
  /** Redraws one status line on stderr (a terminal); '' clears it. */
  progress?: (line: string) => void;
  /** All of standard input, as text (`--from-file -`). */
  readStdin?: () => Promise<string>;
}

export interface CommandContext {
  opts: Options;
  /** Words that are not options: `rq stats <queue>`'s queue. */
  rest?: string[];
  root: string;
  io: RqIo;
}

/** One entry of the command table: what the parser and the help read (command-spec.ts), and what runs. */
export interface RqCommand extends CommandSpec {
  /** Returns the exit code: 0 iff the queue said ok (exit-codes.ts). */
  run: (ctx: CommandContext) => Promise<number>;
  /** False for a command that reads no root (`verify_rules` checks a file by path): it runs before any `npm start`. */
  needsRoot?: false;
}
