// Reads a command line against the command's table: unknown commands and options (with the closest valid one), bare value options and stray words are refused before anything is sent.
import { type ParsedArgs, parseArgs } from '../args.js';
import { shown } from '../errors.js';
import { closest } from '../message/nearest-name.js';
import type { CommandSpec, OptionSpec } from './command-spec.js';
import { ROOT_OPTION } from './common-options.js';
import { usage } from './rq-options.js';

/** The command's own options, then `--root`. */
export function allOptions(spec: CommandSpec): OptionSpec[] {
  return [...spec.options, ROOT_OPTION];
}

// The "did you mean" of options, and of a message's fields (web): one edit distance for both.
export { closest, distance } from '../message/nearest-name.js';

const valueOf = (o: OptionSpec) => o.arg ?? 'VALUE';

/** The one line for a command word the table lacks: `rq: unknown command "sendmsg"; did you mean "sendmesg"? (rq --help lists every command)`. */
export function unknownCommand(word: string, commands: readonly string[]): string {
  const near = closest(word, commands);
  return `rq: unknown command ${shown(word)}${near === undefined ? '' : `; did you mean ${shown(near)}?`} (rq --help lists every command)`;
}

/** `given`: the option as typed, when not `--<key>` (`-v`). */
function unknownOption(command: string, key: string, options: OptionSpec[], given = `--${key}`): Error {
  const names = options.map((o) => o.name);
  const near = closest(key, names);
  if (near !== undefined) return usage(`${command}: unknown option ${given} (did you mean --${near}?); rq ${command} --help lists the options`);
  return usage(`${command}: unknown option ${given}; valid options: ${names.map((n) => `--${n}`).join(', ')}`);
}

/**
 * Parses argv (its first word is the command) as the command's table entry says: flags never take
 * the next word, every option must be in the table, value options need a value, and words after the
 * command are only taken where the command has arguments. Throws RQ_ERR_USAGE naming the option.
 */
export function checkCommandLine(command: string, spec: CommandSpec, argv: readonly string[]): ParsedArgs {
  const options = allOptions(spec);
  const flags = new Set(options.filter((o) => o.kind === 'flag').map((o) => o.name));
  const parsed = parseArgs(argv, { flags });
  const byName = new Map(options.map((o) => [o.name, o]));
  for (const [key, v] of Object.entries(parsed.opts)) {
    const o = byName.get(key);
    if (!o) throw unknownOption(command, key, options);
    const kind = o.kind ?? 'value';
    if (kind === 'value' && typeof v === 'boolean') {
      throw usage(`--${key}: expected ${o.expected ?? `a value (--${key} ${valueOf(o)} or --${key}=${valueOf(o)})`}, received no value`);
    }
  }
  // `-v`, `-json`: an option with one dash, not a word (after a bare `--` every word is a word).
  const dashed = argv.includes('--') ? undefined : parsed.rest.find((w) => /^-[A-Za-z]/.test(w));
  if (dashed !== undefined) throw unknownOption(command, dashed.slice(1), options, dashed);
  const args = spec.args ?? [];
  if (parsed.rest.length > args.length) {
    const extra = parsed.rest[args.length];
    const takes =
      args.length === 0
        ? 'takes no words besides its options'
        : `takes at most ${args.length} word${args.length > 1 ? 's' : ''} (${args.map((a) => `<${a.name}>`).join(' ')})`;
    throw usage(`${command}: unexpected argument ${shown(extra)}: rq ${command} ${takes}; options are --name value`);
  }
  return parsed;
}
