// The rq_router rules file (config/rq_router_rules.rb, spec §12.3): the classic DSL read line by line as literals, never evaluated.
import { RqError, isRqError } from '../errors.js';
import { type RuleValue, parseStatement } from './rule-values.js';

export const ROUTER_ACTIONS = ['relay', 'balance', 'done', 'err'] as const;
export type RouterAction = (typeof ROUTER_ACTIONS)[number];

export interface RouterRule {
  desc: string;
  src?: RegExp;
  dest?: RegExp;
  action: RouterAction;
  /** Flat: every entry is a target; nested: each sub-list is one choice (spec §12.3). */
  route: string[] | string[][];
  delay: number;
  log: boolean;
  /** 1-based line of the `rule` statement (0 for the built-in default). */
  line: number;
}

export interface RuleSet {
  rules: RouterRule[];
  /** Statements skipped because their argument had the wrong type (the classic ignored them too). */
  warnings: string[];
}

/** The rule used when the file has none named "default": everything unmatched ends in err, logged. */
export const BUILTIN_DEFAULT: RouterRule = { desc: 'default', action: 'err', route: [], delay: 0, log: true, line: 0 };

interface Draft {
  desc: string;
  line: number;
  src?: RegExp;
  dest?: RegExp;
  action?: RouterAction;
  route?: string[] | string[][];
  delay?: number;
  log?: boolean;
}

const describe = (v: RuleValue): string => (v.type === 'array' ? 'an array' : v.type === 'nil' ? 'nil' : `a ${v.type}`);

/**
 * Parses the whole file; throws RQ_ERR_CONFIG naming `<label>:<line>` and the reason when it is
 * not a valid rules file. A rule runs from its `rule` line to the next blank line, the next
 * `rule`, or the end of the file (the classic never finished a last rule without a blank line
 * after it, spec §12.3 — here it counts).
 */
export function parseRules(text: string, label: string): RuleSet {
  const warnings: string[] = [];
  const rules: RouterRule[] = [];
  let draft: Draft | null = null;
  const fail = (line: number, reason: string): never => {
    throw RqError.of('RQ_ERR_CONFIG', `${label}:${line}: ${reason}`);
  };
  const finish = () => {
    if (draft) rules.push(finalise(draft, fail));
    draft = null;
  };

  const lines = text.split('\n');
  for (let n = 1; n <= lines.length; n++) {
    const raw = lines[n - 1];
    if (raw.trim() === '') {
      finish();
      continue;
    }
    let st;
    try {
      st = parseStatement(raw);
    } catch (err) {
      if (isRqError(err, 'RQ_ERR_RULE_SYNTAX')) fail(n, err.message);
      throw err;
    }
    if (!st) continue; // a comment line
    const warn = (what: string, arg: RuleValue | undefined) =>
      warnings.push(`${label}:${n}: ${st.keyword} expects ${what}, got ${arg ? describe(arg) : 'nothing'}; statement ignored`);
    const one = st.args.length === 1 ? st.args[0] : undefined;
    if (st.keyword === 'rule') {
      finish();
      const desc = one && (one.type === 'string' || one.type === 'symbol') ? one.value : null;
      if (desc === null) warn('a description (string or symbol)', one);
      draft = { desc: desc ?? '', line: n };
      continue;
    }
    if (!draft) fail(n, `${st.keyword} outside a rule (a rule starts with a line: rule "description")`);
    const d = draft as Draft;
    switch (st.keyword) {
      case 'src':
      case 'dest':
        if (one?.type === 'regexp') d[st.keyword] = one.value;
        else warn('a regexp such as /pattern/', one);
        break;
      case 'action':
        if (one?.type !== 'symbol') warn('a symbol such as :relay', one);
        else if (!(ROUTER_ACTIONS as readonly string[]).includes(one.value)) fail(n, `unknown action :${one.value} (expected :relay, :balance, :done or :err)`);
        else d.action = one.value as RouterAction;
        break;
      case 'route': {
        const route = routeOf(st.args);
        if (route) d.route = route;
        else warn('host strings ("h1", "h2") or arrays of them (["a","b"], ["c"])', st.args.find((a) => a.type !== 'string' && a.type !== 'array') ?? one);
        break;
      }
      case 'delay':
        if (one?.type === 'integer' && one.value >= 0) d.delay = one.value;
        else warn('a whole number of seconds', one);
        break;
      case 'log':
        if (one?.type === 'boolean') d.log = one.value;
        else warn('true or false', one);
        break;
      default:
        fail(n, `unknown statement ${st.keyword} (expected rule, src, dest, action, route, delay or log)`);
    }
  }
  finish();

  // Defaults go last; only the last one written counts.
  const defaults = rules.filter((r) => r.desc === 'default');
  const ordered = rules.filter((r) => r.desc !== 'default');
  ordered.push(defaults.length ? defaults[defaults.length - 1] : BUILTIN_DEFAULT);
  return { rules: ordered, warnings };
}

function routeOf(args: RuleValue[]): string[] | string[][] | null {
  if (args.length === 0) return null;
  if (args.every((a) => a.type === 'string')) return args.map((a) => (a as { value: string }).value);
  // `route ["a","b"], ["c"]`, and also `route [["a","b"], ["c"]]`.
  const lists = args.length === 1 && args[0].type === 'array' && args[0].value.every((v) => v.type === 'array') ? args[0].value : args;
  if (lists.length === 1 && lists[0].type === 'array' && lists[0].value.every((v) => v.type === 'string')) {
    // A single flat array is a flat list of hosts.
    return lists[0].value.map((v) => (v as { value: string }).value);
  }
  const out: string[][] = [];
  for (const l of lists) {
    if (l.type !== 'array' || l.value.length === 0 || !l.value.every((v) => v.type === 'string')) return null;
    out.push(l.value.map((v) => (v as { value: string }).value));
  }
  return out;
}

function finalise(d: Draft, fail: (line: number, reason: string) => never): RouterRule {
  const isDefault = d.desc === 'default';
  if (!d.action) fail(d.line, `rule ${JSON.stringify(d.desc)} has no action (add: action :relay, :balance, :done or :err)`);
  const action = d.action as RouterAction;
  if (!isDefault && !d.src && !d.dest)
    fail(d.line, `rule ${JSON.stringify(d.desc)} has neither src nor dest: it would match everything (only the "default" rule may)`);
  const route = d.route ?? [];
  if ((action === 'relay' || action === 'balance') && route.length === 0)
    fail(d.line, `rule ${JSON.stringify(d.desc)}: action :${action} needs a route "host[:port]", ...`);
  return {
    desc: d.desc,
    ...(d.src ? { src: d.src } : {}),
    ...(d.dest ? { dest: d.dest } : {}),
    action,
    route,
    delay: d.delay ?? 0,
    // :err rules always log (classic finalisation).
    log: action === 'err' ? true : (d.log ?? false),
    line: d.line,
  };
}

/** One line per rule, for `rq verify_rules --verbose`. */
export function describeRule(r: RouterRule): string {
  const parts = [`rule ${JSON.stringify(r.desc)}`];
  if (r.src) parts.push(`src ${r.src}`);
  if (r.dest) parts.push(`dest ${r.dest}`);
  parts.push(`action :${r.action}`);
  if (r.route.length) parts.push(`route ${JSON.stringify(r.route)}`);
  parts.push(`delay ${r.delay}`, `log ${r.log}`);
  return `${r.line ? `line ${r.line}: ` : 'built-in: '}${parts.join(' | ')}`;
}
