// rq: the command line client of queue sockets (spec §10.1), `rq <command> [--key value | --key=value | --flag] …`.
import { resolveRoot } from '../config/root.js';
import { parseArgs } from '../args.js';
import { RQ_COMMANDS, type RqIo } from './rq-commands.js';
import { rootOpt } from './rq-options.js';

function processIo(): RqIo {
  // A reader that went away (`rq … | head -0`) is not worth a stack trace.
  process.stdout.on('error', () => undefined);
  return {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
    cwd: process.cwd(),
    env: process.env,
  };
}

function help(io: RqIo): void {
  const width = Math.max(...Object.keys(RQ_COMMANDS).map((c) => c.length));
  io.stdout('Valid commands are:');
  for (const [name, cmd] of Object.entries(RQ_COMMANDS)) io.stdout(`  ${name.padEnd(width)}  ${cmd.summary}`);
}

/** Runs one command; returns the exit code. Never throws: every failure is one line on stderr. */
export async function main(argv: string[], io: RqIo = processIo()): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    help(io);
    return 0;
  }
  const { command, opts, rest } = parseArgs(argv);
  if (command === undefined) {
    help(io);
    return 1; // classic: no command is a usage error
  }
  const cmd = Object.hasOwn(RQ_COMMANDS, command) ? RQ_COMMANDS[command] : undefined;
  if (!cmd) {
    io.stderr(`Command not found: ${command}`);
    return 1;
  }
  try {
    return await cmd.run({ opts, rest, root: resolveRoot(rootOpt(opts), io.env), io });
  } catch (err) {
    // RqErrors are written for the user; anything else is still one line, never a stack trace.
    io.stderr(`rq: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
