// rq: the command line client of queue sockets (spec §10.1), `rq <command> [--key value | --key=value | --flag] …`.
import { RQ_COMMANDS } from './rq-commands.js';
import type { RqCommand, RqIo } from './rq-command.js';
import { commandHelp, commandList, shortUsage } from './command-help.js';
import { checkCommandLine, unknownCommand } from './option-check.js';
import { EXIT, exitFor } from './exit-codes.js';
import { type Options, rootDir, rootOpt, usage } from './rq-options.js';
import { resolveRoot } from '../config/root.js';
import { shown } from '../errors.js';
import readline from 'node:readline/promises';
import { visible } from './visible-text.js';

function processIo(): RqIo {
  // A reader that went away (`rq … | head -0`) is not worth a stack trace.
  process.stdout.on('error', () => undefined);
  return {
    stdout: (line) => process.stdout.write(`${visible(line)}\n`),
    stderr: (line) => process.stderr.write(`${visible(line)}\n`),
    write: (text) => new Promise((resolve) => (process.stdout.write(text) ? resolve() : process.stdout.once('drain', resolve))),
    cwd: process.cwd(),
    env: process.env,
    tty: { stdin: process.stdin.isTTY === true, stderr: process.stderr.isTTY === true },
    confirm: async (question) => {
      const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
      try {
        return /^y(es)?$/i.test((await rl.question(question)).trim());
      } finally {
        rl.close();
      }
    },
    progress: (line) => process.stderr.write(`\r\x1b[2K${line}`),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/** `rq stats <queue>`, `rq wait <msg_id>`: a word stands for its option; naming it both ways differently is refused. */
function wordsAsOptions(cmd: RqCommand, opts: Options, rest: string[]): void {
  (cmd.args ?? []).forEach((a, i) => {
    const word = rest[i];
    if (word === undefined || a.option === undefined) return;
    const given = opts[a.option];
    if (given !== undefined && given !== word) throw usage(`the ${a.name} is named twice (${shown(word)} and --${a.option} ${shown(given)})`);
    opts[a.option] = word;
  });
}

/** Runs one command; returns the exit code (exit-codes.ts). Never throws: every failure is one line on stderr. */
export async function main(argv: string[], io: RqIo = processIo()): Promise<number> {
  const word = argv[0];
  const cmd = word !== undefined && Object.hasOwn(RQ_COMMANDS, word) ? RQ_COMMANDS[word] : undefined;
  const helpAsked = argv.includes('-h') || argv.includes('--help');
  if (word === undefined) {
    // Exit 1 as classic (spec §10.1); the classic's whole list is rq --help's.
    for (const line of shortUsage(RQ_COMMANDS)) io.stdout(line);
    return EXIT.fail;
  }
  if (word === '--version') return main(['version', ...argv.slice(1)], io);
  // `rq help` and `rq help <command>`, as git and npm have them: what a new user types first.
  if (word === 'help' && !cmd) return argv.length > 1 ? main([argv[1], '--help'], io) : main(['--help'], io);
  if (word.startsWith('-')) {
    if (helpAsked) {
      for (const line of commandList(RQ_COMMANDS)) io.stdout(line);
      return EXIT.ok;
    }
    // `rq --frob`, `rq -x`: one line saying what is wrong, as an unknown option of a command gets.
    io.stderr(`rq: ${shown(word)}: expected a command first (rq <command> [options]), received an option; rq --help lists every command`);
    return EXIT.usage;
  }
  if (!cmd) {
    // One line, not the list, with the nearest command; exit 1 as the classic tool's `Command not found`.
    io.stderr(unknownCommand(word, Object.keys(RQ_COMMANDS)));
    return EXIT.fail;
  }
  if (helpAsked) {
    for (const line of commandHelp(word, cmd)) io.stdout(line);
    return EXIT.ok;
  }
  try {
    const { opts, rest } = checkCommandLine(word, cmd, argv);
    wordsAsOptions(cmd, opts, rest);
    return await cmd.run({ opts, rest, root: cmd.needsRoot === false ? resolveRoot(rootOpt(opts), io.env) : rootDir(opts, io.env), io });
  } catch (err) {
    // RqErrors are written for the user; anything else is still one line, never a stack trace.
    io.stderr(`rq: ${err instanceof Error ? err.message : String(err)}`);
    return exitFor(err);
  }
}
