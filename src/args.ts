// The classic rq argument parser (spec §10.1): a command word, then --k=v, --k v, --k and --no-k options.

export type OptionValue = string | boolean;

export interface ParsedArgs {
  /** The first word, unless it is an option (then undefined and it is parsed as one). */
  command: string | undefined;
  opts: Record<string, OptionValue>;
  /** Words that are neither options nor option values; the classic tool ignores them. */
  rest: string[];
}

export interface ParseOptions {
  /** False for tools without a command word (rq-install): every word is an option or rest. */
  command?: boolean;
  /** Options that never take a value from the next word (`--json q` leaves `q` a word); `--k=v` still sets one. */
  flags?: ReadonlySet<string>;
}

const isOption = (word: string): boolean => word.startsWith('--') && word.length > 2;

/**
 * Later options win. `--k v` takes `v` unless it starts with `--` (classic tests "contains --";
 * we test the start, so a value like `a--b` stays a value). `--no-k` is always boolean false
 * and takes no value. A bare `--` ends the options: every later word goes to `rest`.
 */
export function parseArgs(argv: readonly string[], parse: ParseOptions = {}): ParsedArgs {
  const opts: Record<string, OptionValue> = Object.create(null) as Record<string, OptionValue>;
  const rest: string[] = [];
  let i = 0;
  let command: string | undefined;
  if ((parse.command ?? true) && argv.length > 0 && !isOption(argv[0]) && argv[0] !== '--') {
    command = argv[0];
    i = 1;
  }
  for (; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') {
      rest.push(...argv.slice(i + 1));
      break;
    }
    if (!isOption(word)) {
      rest.push(word);
      continue;
    }
    const body = word.slice(2);
    const eq = body.indexOf('=');
    if (eq >= 0) {
      opts[body.slice(0, eq)] = body.slice(eq + 1);
    } else if (body.startsWith('no-') && body.length > 3) {
      opts[body.slice(3)] = false;
    } else if (!parse.flags?.has(body) && i + 1 < argv.length && !argv[i + 1].startsWith('--')) {
      opts[body] = argv[++i];
    } else {
      opts[body] = true;
    }
  }
  return { command, opts, rest };
}

/**
 * Pulls every `--name v` / `--name=v` out of argv for an option that may be given more than once
 * (`undefined` for one given without a value); the rest is left for parseArgs.
 */
export function takeRepeated(argv: readonly string[], name: string): { values: (string | undefined)[]; rest: string[] } {
  const values: (string | undefined)[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (word.startsWith(`--${name}=`)) values.push(word.slice(name.length + 3));
    else if (word !== `--${name}`) rest.push(word);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) values.push(argv[++i]);
    else values.push(undefined);
  }
  return { values, rest };
}
