// A real SIGKILL of the queue process between a tag change's journal line and its `msg` write (rq-beyond §B9.5, §B17 "tag: journal line only"), frozen there by test/helpers/hold-point.mjs: after the restart `msg` is the truth, and the extra index entry finds nothing.
import path from 'node:path';
import { expect, it } from 'vitest';
import { holdAtRename, killFrozenAfterEach } from '../../helpers/crash-point.js';
import { perTestRoot } from '../../helpers/per-test-root.js';
import { QueueProc, addQueue } from '../../helpers/rq-root.js';

const ctx = perTestRoot();
const frozen = killFrozenAfterEach(ctx);

it('killed after the journal line of an added tag, before the msg write: the message keeps its old tags; the tag finds and cancels nothing', async () => {
  await addQueue(ctx.t.root, 'tagq');
  const point = await holdAtRename(ctx.t.root, { from: /\/que\/[^/]+\/msg\.tmp$/, to: /\/que\/[^/]+\/msg$/, when: 'before' });
  ctx.q = frozen(await QueueProc.start(ctx.t.root, 'tagq', { env: point.env }));
  const id = await ctx.q.send({ param1: 'done', tags: ['old'], due: Math.floor(Date.now() / 1000) + 3600 });
  const answer = ctx.q.cmd('tag_message', { msg_id: id, add: ['new'] }).then(
    (r) => r,
    (err: Error) => err.message,
  );
  const held = await point.reached();
  expect(held.to).toBe(path.join(ctx.q.paths.state.que, id, 'msg'));
  await ctx.q.kill9();
  expect(Array.isArray(await answer) && (await answer)[0] === 'ok').toBe(false);

  ctx.q = await QueueProc.start(ctx.t.root, 'tagq');
  const m = (await ctx.q.cmd('get_message', { msg_id: id }))[1];
  expect(m).toMatchObject({ state: 'que', tags: ['old'] });
  expect((await ctx.q.cmd('tagged', { tag: 'new' }))[1].messages).toEqual([]);
  expect((await ctx.q.cmd('tagged', { tag: 'old' }))[1].messages.map((e: { msg_id: string }) => e.msg_id)).toEqual([id]);
  // The extra entry cancels nothing: the message does not carry the tag.
  expect(await ctx.q.cmd('cancel_tagged', { tag: 'new' })).toEqual(['ok', 0]);
  expect(await ctx.q.state(id)).toBe('que');
});
