// check_rq's command line, read as Nagios plugins read theirs: every word an option it knows (or that option's value), else refused by name before anything is fetched.
import { shown } from '../errors.js';
import { closest } from '../message/nearest-name.js';

interface CheckOption {
  /** The one-letter form (`-s`), when there is one. */
  short?: string;
  long: string;
  /** What its value is (`HOST`); absent for a flag. */
  value?: string;
  /** Its value is never printed (a password). */
  secret?: boolean;
}

const OPTIONS: readonly CheckOption[] = [
  { short: 's', long: 'server', value: 'HOST' },
  { short: 'p', long: 'port', value: 'PORT' },
  { short: 't', long: 'thresh', value: 'a:b:c:d' },
  { short: 'u', long: 'user', value: 'NAME:PASSWORD', secret: true },
  { long: 'user-file', value: 'FILE (NAME:PASSWORD on its first line)' },
  { short: 'd', long: 'dump' },
  { short: 'h', long: 'help' },
];

/** Nagios's usual options for a host that check_rq spells otherwise: named in the refusal, as a silent default would probe another host. */
const NAGIOS_HINTS: Record<string, string> = { '-H': ' (the host is -s HOST or --server HOST)', '-P': ' (the port is -p PORT)' };

/** Each option given, by its long name: a value, or true for a flag. */
export type CheckOpts = Partial<Record<string, string | true>>;

export type CheckArgs = { opts: CheckOpts } | { problem: string };

const byShort = new Map(OPTIONS.filter((o) => o.short).map((o) => [`-${o.short}`, o]));
const byLong = new Map(OPTIONS.map((o) => [`--${o.long}`, o]));
const names = (o: CheckOption) => (o.short ? `-${o.short}/--${o.long}` : `--${o.long}`);

function unknownOption(given: string): string {
  const near = given.startsWith('--')
    ? closest(
        given.slice(2),
        OPTIONS.map((o) => o.long),
      )
    : undefined;
  const hint = NAGIOS_HINTS[given] ?? (near === undefined ? '' : ` (did you mean --${near}?)`);
  return `unknown option ${given}${hint}; check_rq -h lists the options`;
}

/**
 * Reads argv: `-s HOST`, `--server HOST`, `--server=HOST`, flags alone. A value option needs a value
 * (the next word, unless that is an option: a host, port or file never starts with `-`); an option
 * given twice, an unknown option and any other word are refused, by name, with what was expected.
 */
export function readCheckArgs(argv: readonly string[]): CheckArgs {
  const opts: CheckOpts = {};
  /** The option whose value the word before held, when it is a secret: the next stray word may be the rest of it (`-u admin hunter2`, `--user=admin:correct horse`). */
  let afterSecret: CheckOption | null = null;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    const eq = word.startsWith('--') ? word.indexOf('=') : -1;
    const given = eq > 0 ? word.slice(0, eq) : word;
    const o = byShort.get(given) ?? byLong.get(given);
    if (!o) {
      if (word.startsWith('-') && word !== '-' && word !== '--') return { problem: unknownOption(given) };
      // Not echoed after a password: check_rq's line ends up on dashboards and in alerts.
      const what = afterSecret ? `after ${names(afterSecret)}'s value (not shown: it may be part of a password)` : shown(word);
      return { problem: `unexpected argument ${what}: check_rq takes no words besides its options (check_rq -h lists them)` };
    }
    afterSecret = null;
    let value: string | true = true;
    if (o.value === undefined) {
      if (eq > 0) return { problem: `${given}: expected no value (a flag), received ${shown(word.slice(eq + 1))}` };
    } else if (eq > 0) {
      value = word.slice(eq + 1);
    } else if (i + 1 < argv.length && !argv[i + 1].startsWith('-')) {
      value = argv[++i];
    } else {
      const next = i + 1 < argv.length ? (o.secret ? 'a word starting with -' : `the option ${argv[i + 1]}`) : 'nothing';
      return { problem: `${given}: expected ${o.value}, received ${next}` };
    }
    if (o.secret) afterSecret = o;
    const before = opts[o.long];
    if (before !== undefined) {
      const values = o.value === undefined || o.secret ? 'it twice' : `${shown(before)} and ${shown(value)}`;
      return { problem: `${names(o)}: expected once, received ${values}` };
    }
    opts[o.long] = value;
  }
  return { opts };
}
