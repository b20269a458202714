// The rq tool's `tagged` and `tracked` (rq-beyond §B9.2, §B9.4): the messages with a tag, most recently tagged first, of one queue or of every queue merged.
import { shown } from '../errors.js';
import type { Answer } from '../ipc/answer.js';
import type { QueueClient } from '../ipc/queue-client.js';
import { type TaggedPage, mergeTaggedPages } from '../ipc/tag-lists.js';
import { fullId } from '../message/message-id.js';
import { hostOf } from './root-host.js';
import { STATES, type State } from '../message/states.js';
import { TAG_EXPECTED, TRACK_TAG } from '../message/tags.js';
import { askEvery, reportProblems } from './fan-out.js';
import { ask } from './queue-ask.js';
import { printRefusal } from './json-output.js';
import type { RqCommand } from './rq-command.js';
import type { OptionSpec } from './command-spec.js';
import { JSON_FLAG, OFFSET, limitOption } from './common-options.js';
import { type Options, checkQueueName, flagOpt, requiredOpt, stringOpt, wholeOpt, tagOpt, usage } from './rq-options.js';

/** The most a queue answers at once, and the furthest offset it takes (queue/commands/tag-commands.ts). */
const MAX_PAGE = 1000;
const MAX_OFFSET = 10_000_000;
const DEFAULT_LIMIT = 25;

interface Query {
  tag: string;
  state?: State;
  offset: number;
  limit: number;
}

/** `--state`, `--offset`, `--limit`, checked here so that a fan-out refuses them once, not once per queue. */
function queryOpts(opts: Options, tag: string): Query {
  const states = `one of ${STATES.join(', ')}`;
  const state = stringOpt(opts, 'state', states);
  if (state !== undefined && !(STATES as readonly string[]).includes(state)) throw usage(`--state: expected ${states}, received ${shown(state)}`);
  return {
    tag,
    state: state as State | undefined,
    offset: wholeOpt(opts, 'offset', 0, MAX_OFFSET, 0),
    limit: wholeOpt(opts, 'limit', 1, MAX_PAGE, DEFAULT_LIMIT),
  };
}

/**
 * A queue's first `want` messages with the tag, as the merge needs them (from offset 0), asked a
 * page of at most 1000 at a time; a page shorter than asked is the last.
 */
async function firstTagged(c: QueueClient, q: Query, want: number): Promise<Answer<TaggedPage>> {
  let whole: Answer<TaggedPage> | undefined;
  for (let offset = 0; offset < want; offset += MAX_PAGE) {
    const limit = Math.min(MAX_PAGE, want - offset);
    const a = await c.tagged({ tag: q.tag, state: q.state, offset, limit });
    if (!a.ok) return a;
    if (whole?.ok) {
      const { total, messages, gone = [] } = whole.value;
      whole = { ...whole, value: { total, messages: [...messages, ...a.value.messages], gone: [...gone, ...(a.value.gone ?? [])] } };
    } else whole = a;
    if (a.value.messages.length < limit) break;
  }
  return whole!;
}

/**
 * `ok <total>` then `<FULLID> <state>` per message (`--json`: the merged listing). With `--queue`
 * that queue's page; without, every queue's, merged (ipc/tag-lists.ts): a queue that refuses or
 * does not answer is named on stderr and makes the first line `fail <total>` (exit 1).
 */
function listing(summary: string, example: string, fixedTag?: string): RqCommand {
  const tagOption: OptionSpec[] = fixedTag === undefined ? [{ name: 'tag', arg: 'T', expected: TAG_EXPECTED, help: 'the tag' }] : [];
  return {
    summary,
    // `rq tagged release-42`: the tag as a word.
    args: fixedTag === undefined ? [{ name: 'tag', option: 'tag', required: true }] : undefined,
    options: [
      ...tagOption,
      { name: 'queue', arg: 'QUEUE', expected: 'a queue name', help: 'only this queue (default: every queue of the root, merged)' },
      { name: 'state', arg: 'STATE', help: `only messages in this state (${STATES.join(', ')})` },
      OFFSET,
      limitOption(MAX_PAGE, DEFAULT_LIMIT),
      JSON_FLAG,
    ],
    examples: [example],
    run: async ({ opts, root, io }) => {
      const q = queryOpts(opts, fixedTag ?? tagOpt(opts));
      const json = flagOpt(opts, 'json');
      const queue = opts.queue === undefined ? undefined : checkQueueName(requiredOpt(opts, 'queue', 'a queue name'), 'queue');
      let list: ReturnType<typeof mergeTaggedPages>;
      let status: 'ok' | 'fail' = 'ok';
      if (queue !== undefined) {
        const a = await ask(root, queue, (c) => c.tagged(q));
        if (!a.ok) return printRefusal(io, a, json);
        list = mergeTaggedPages([{ queue, page: a.value }], 0, q.limit);
      } else {
        const every = await askEvery(root, (c) => firstTagged(c, q, q.offset + q.limit));
        status = reportProblems(io, every.problems);
        list = mergeTaggedPages(
          every.answers.map(({ queue: name, value }) => ({ queue: name, page: value })),
          q.offset,
          q.limit,
        );
      }
      if (json) io.stdout(JSON.stringify(list));
      else {
        const host = list.messages.length ? hostOf(root) : undefined;
        for (const line of [`${status} ${list.total}`, ...list.messages.map((m) => `${fullId(host!, m.queue, m.msg_id)} ${m.state}`)]) io.stdout(line);
      }
      return status === 'ok' ? 0 : 1;
    },
  };
}

export const TAGGED_COMMANDS: Record<string, RqCommand> = {
  tagged: listing(
    'list the messages with a tag, most recently tagged first, of one queue or of every queue',
    'rq tagged release-42 --queue build --state done',
  ),
  tracked: listing(`list the tracked messages (tag "${TRACK_TAG}") of every queue, most recently tracked first`, 'rq tracked --state run', TRACK_TAG),
};
