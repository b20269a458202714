// A script's `dup` (spec §4.6) refused or sent elsewhere: a malformed line, relay dests, its own queue DOWN, and another queue refusing the copy at attach or commit.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { queuePaths } from '../../../src/config/paths.js';
import { listenSocket } from '../../../src/ipc/socket-server.js';
import { silentLogger } from '../../../src/log.js';
import { holdAt } from '../../helpers/crash-point.js';
import { QueueProc, addQueue, waitFor } from '../../helpers/rq-root.js';
import { perTestRoot } from '../../helpers/per-test-root.js';

const root = perTestRoot();
const { start } = root;
/** A queue that takes messages and runs none of them. */
async function paused(name: string) {
  await fs.writeFile(path.join(root.t.root, 'config', `${name}.pause`), '');
  return start(name);
}
const finished = (q: QueueProc, id: string) => q.waitState(id, ['done', 'err']);
/** A bash script written into the root: `body` runs with `say` writing to fd 3. */
async function script(name: string, body: string): Promise<string> {
  const file = path.join(root.t.root, name);
  await fs.writeFile(file, `#!/bin/bash\nsay() { printf '%s\\n' "$*" >&3; }\n${body}\n`, { mode: 0o755 });
  return file;
}
/** Sends a message to `q` with one attachment (prep, attach, commit) and returns its id. */
async function sendAttached(q: QueueProc, fields: Record<string, unknown>): Promise<string> {
  const file = path.join(root.t.root, 'blob.bin');
  await fs.writeFile(file, Buffer.alloc(4096, 7));
  const prep = await q.cmd('prep_message', { dest: q.name, ...fields });
  const id = String(prep[1]).split('/').pop()!;
  expect(await q.cmd('attach_message', { msg_id: id, pathname: file })).toEqual(['ok', expect.stringMatching(/-Attached successfully$/)]);
  expect(await q.cmd('commit_message', { msg_id: id })).toEqual(['ok', 'msg commited']);
  return id;
}
const counts = async (q: QueueProc) => (await q.cmd('num_messages')) as Record<string, number>;

describe('dup lines', () => {
  it('a dup line that does not parse is answered with what was expected and what came', async () => {
    const q = await start('src');
    const m = await finished(q, await q.send({ param1: 'dup', param2: 'src', param3: 'soon' }));
    expect(m.status).toBe('err - fail dup failed - expected <delay>-<flag>-<dest>, received "soon-X-src"');
    expect((await counts(q)).que).toBe(0);
  });

  it('a dup to an http URL is a copy in the relay queue, its dest kept', async () => {
    const relay = await paused('relay');
    const q = await start('src');
    const dest = 'http://127.0.0.1:1/q/far/';
    const m = await finished(q, await q.send({ param1: 'dup', param2: dest }));
    expect(m.status).toMatch(/^done - ok http:\/\/.*\/q\/relay\/\d{8}\./);
    const copy = (await relay.cmd('get_message', { msg_id: m.status.split('/').pop() }))[1];
    expect(copy).toMatchObject({ dest, state: 'que', param1: 'dup', param2: dest, orig_msg_id: m.orig_msg_id });
  });

  it('a dup to fleet:<pool> goes to the relay queue, which answers for it: this host is in no fleet', async () => {
    const relay = await paused('relay');
    const q = await start('src');
    const m = await finished(q, await q.send({ param1: 'dup', param2: 'fleet:pool' }));
    expect(m.status).toBe(
      'err - fail dup failed - dest: expected a queue name or an http(s) URL (fleet:<queue> needs this host in a fleet; config.json names none), received "fleet:pool"',
    );
    expect(await counts(relay)).toMatchObject({ prep: 0, que: 0 });
  });
});

describe('dup to its own queue', () => {
  it('makes the copy while the queue is DOWN: it needs no socket, the running message is the queue', async () => {
    const fifo = path.join(root.t.root, 'go.fifo');
    execFileSync('mkfifo', [fifo]);
    const body = 'read -r _ < "$RQ_PARAM2"; say "dup 3600-X-$RQ_DEST_QUEUE"; read -r reply <&4; say "done $reply"';
    const q = await start('self', { script: await script('self.sh', body) });
    const id = await q.send({ param2: fifo });
    await q.waitState(id, ['run']);
    await fs.writeFile(path.join(root.t.root, 'config', 'self.down'), '');
    await waitFor(async () => (await q.cmd('status'))[0] === 'DOWN', 'the queue to go DOWN');
    await fs.writeFile(fifo, 'go\n');
    // `running` is answered while DOWN: the run is over once the script has had its reply.
    await waitFor(async () => (await q.cmd('running'))[1].length === 0, 'the run to end');
    await fs.rm(path.join(root.t.root, 'config', 'self.down'));
    await waitFor(async () => (await q.cmd('status'))[0] === 'UP', 'the queue to come UP');
    const m = await finished(q, id);
    expect(m.status).toMatch(/^done - ok http:\/\/.*\/q\/self\/\d{8}\./);
    const copy = (await q.cmd('get_message', { msg_id: m.status.split('/').pop() }))[1];
    expect(copy).toMatchObject({ state: 'que', dest: 'self', param2: fifo });
  });
});

describe('another queue refuses the copy', () => {
  it('at attach: a directory the script left in attach/ is named in the reply', async () => {
    const dst = await paused('dst');
    const body = 'mkdir -p "$RQ_MSG_DIR/../attach/made-by-script"; say "dup 0-X-dst"; read -r reply <&4; say "err $reply"';
    const q = await start('src', { script: await script('mkdir.sh', body) });
    const id = await q.send({});
    const m = await finished(q, id);
    const dir = path.join(queuePaths(root.t.root, 'src').state.run, id, 'attach', 'made-by-script');
    expect(m.status).toBe(`err - fail dup failed - attach fail Attachment currently cannot be a directory ${dir}`);
    // The refused draft is removed from dst's prep, as a copy in the dup's own queue is: it would never run.
    expect(await counts(dst)).toMatchObject({ prep: 0, que: 0 });
  });

  it('at commit: the queue went DOWN after the attachments; the reply says which step', async () => {
    const dst = await paused('dst');
    const point = await holdAt(root.t.root, { kind: 'send', payload: /commit_message/, when: 'before' }, 'src');
    const q = await start('src', {}, point.env);
    const id = await sendAttached(q, { param1: 'dup', param2: 'dst' });
    await point.reached();
    // The copy waits in dst's prep with its attachment; src is held before it sends the commit.
    expect(await counts(dst)).toMatchObject({ prep: 1, que: 0 });
    await fs.writeFile(path.join(root.t.root, 'config', 'dst.down'), '');
    await waitFor(async () => (await dst.cmd('status'))[0] === 'DOWN', 'dst to go DOWN');
    await point.release();
    const m = await finished(q, id);
    expect(m.status).toBe('err - fail dup failed - commit fail status: DOWN');
  });

  it('with a reply of no known shape: the reply is quoted as it came', async () => {
    await addQueue(root.t.root, 'dst');
    const server = await listenSocket({
      path: queuePaths(root.t.root, 'dst').sock,
      proto: 'rq1',
      handle: (payload) => (payload.startsWith('reply_codes') ? '["ok","codes"]' : '{"made":"a copy"}'),
      log: silentLogger(),
    });
    try {
      const q = await start('src');
      const m = await finished(q, await q.send({ param1: 'dup', param2: 'dst' }));
      expect(m.status).toBe('err - fail dup failed - {"made":"a copy"}');
    } finally {
      await server.close();
    }
  });
});
