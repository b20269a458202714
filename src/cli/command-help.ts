// `rq --help` and `rq <command> --help`, written from the same command table the parser reads.
import type { CommandSpec, OptionSpec } from './command-spec.js';
import { allOptions } from './option-check.js';

/** `--name ARG`, `--name`, `--name[=ARG]`. */
function optionWords(o: OptionSpec): string {
  const kind = o.kind ?? 'value';
  if (kind === 'flag') return `--${o.name}`;
  if (kind === 'either') return `--${o.name}[=${o.arg ?? 'VALUE'}]`;
  return `--${o.name} ${o.arg ?? 'VALUE'}`;
}

/** `rq cancel --msg_id FULLID [options]`, `rq stats <queue> [options]`. */
export function usageLine(name: string, spec: CommandSpec): string {
  const words = (spec.args ?? []).map((a) => (a.required ? `<${a.name}>` : `[<${a.name}>]`));
  const positional = new Set((spec.args ?? []).map((a) => a.option));
  const required = spec.options.filter((o) => o.required && !positional.has(o.name)).map(optionWords);
  return ['rq', name, ...words, ...required, '[options]'].join(' ');
}

export function commandHelp(name: string, spec: CommandSpec): string[] {
  const options = allOptions(spec);
  const left = options.map(optionWords);
  const width = Math.min(30, Math.max(...left.map((l) => l.length), '-h, --help'.length));
  const row = (l: string, help: string) => `  ${l.padEnd(width)}  ${help}`;
  const lines = [`rq ${name}: ${spec.summary}`, '', `Usage: ${usageLine(name, spec)}`];
  for (const a of spec.args ?? []) if (a.option) lines.push(`       (<${a.name}> may be given as --${a.option} instead)`);
  lines.push('', 'Options:');
  options.forEach((o, i) => lines.push(row(left[i], `${o.required ? '(required) ' : ''}${o.help}`)));
  lines.push(row('-h, --help', 'print this help and exit 0'));
  if (spec.notes?.length) lines.push('', ...spec.notes);
  lines.push('', spec.examples.length > 1 ? 'Examples:' : 'Example:', ...spec.examples.map((e) => `  $ ${e}`));
  return lines;
}

/** The classic list: `Valid commands are:`, then one `  <name>  <summary>` line per command. */
export function commandList(table: Record<string, CommandSpec>): string[] {
  const width = Math.max(...Object.keys(table).map((c) => c.length));
  return ['Valid commands are:', ...Object.entries(table).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`)];
}

/** What `rq` with no command shows: the commands a new user needs first, each in a few words. */
const COMMON: [string, string][] = [
  ['sendmesg', 'send a message: rq sendmesg --dest <queue> --param1 TEXT'],
  ['statusmesg', "print a message's status"],
  ['wait', 'wait for a message to finish; exit by its outcome'],
  ['tail', "follow a message's output"],
  ['queues', 'list the queues and their counts'],
  ['ls', "list a queue's messages"],
  ['doctor', 'say what is not running as it should, and the fix'],
];

/**
 * `rq` alone: one usage line, the common commands and where the rest are, instead of the whole
 * list (`rq --help` keeps the classic `Valid commands are:` list of every command).
 */
export function shortUsage(table: Record<string, CommandSpec>): string[] {
  const common = COMMON.filter(([name]) => Object.hasOwn(table, name));
  const width = Math.max(...common.map(([name]) => name.length));
  return [
    'Usage: rq <command> [--key value | --key=value | --flag] … [--root DIR]',
    'Common commands:',
    ...common.map(([name, what]) => `  ${name.padEnd(width)}  ${what}`),
    `rq --help lists all ${Object.keys(table).length} commands, rq <command> --help explains one, rq --version prints the version`,
  ];
}
