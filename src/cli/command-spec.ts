// The shape of one entry of rq's command table: its words, options and examples, read both by the parser (option-check.ts) and by the help (command-help.ts).

/** `value`: needs one (`--k v`, `--k=v`); `flag`: bare only (`--k`, `--no-k`), never takes the next word; `either`: bare or with a value. */
export type OptionKind = 'value' | 'flag' | 'either';

export interface OptionSpec {
  name: string;
  /** `value` when absent. */
  kind?: OptionKind;
  /** The value's placeholder in the help: `N`, `QUEUE`, `FULLID`. */
  arg?: string;
  /** What a bare `--name` is refused with: `--name: expected <expected>, received no value`. */
  expected?: string;
  /** One line: what the option means. */
  help: string;
  required?: boolean;
}

/** A word after the command (`rq stats <queue>`); `option` names the option that may stand for it instead. */
export interface ArgSpec {
  name: string;
  option?: string;
  required?: boolean;
}

export interface CommandSpec {
  /** One line: what the command does (the `rq --help` list). */
  summary: string;
  args?: ArgSpec[];
  options: OptionSpec[];
  /** Whole command lines, without the leading `$ `. */
  examples: string[];
  /** Lines printed after the options: exit codes, alternatives. */
  notes?: string[];
}
