// Queue directories as the supervisor and the rq tool find them (src/mgr/queue-dirs.ts): in rq's one name order.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rootPaths } from '../../src/config/paths.js';
import { queueNameRoom } from '../../src/config/socket-paths.js';
import { listenSocket } from '../../src/ipc/socket-server.js';
import { silentLogger } from '../../src/log.js';
import { discoverQueues } from '../../src/mgr/queue-dirs.js';
import { orderQueues } from '../../src/message/queue-order.js';
import { runRq } from '../helpers/rq-cli.js';
import { type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';

let t: TestRoot;
beforeEach(async () => {
  t = await makeRoot();
});
afterEach(() => t.cleanup());

/**
 * Node's fs.readdir returns names sorted by bytes (libuv's scandir sorts with strcmp), which for
 * UTF-8 is code point order. rq's listings sort JavaScript strings, by UTF-16 code units: the two
 * agree on ASCII names and differ between a character of U+E000–U+FFFF (here a fullwidth B,
 * U+FF22) and one beyond U+FFFF (an emoji, a surrogate pair starting 0xD83D).
 */
const CREATED = ['zulu', 'Ｂravo', '😀smile', 'alpha', 'mike'];
const NAME_ORDER = ['alpha', 'mike', 'zulu', '😀smile', 'Ｂravo'];

describe('discoverQueues', () => {
  it('lists the queues in the name order of every other queue listing (the dashboard), leaving out bad names and dirs without a readable config.json', async () => {
    for (const n of CREATED) await addQueue(t.root, n);
    await fs.mkdir(path.join(t.root, 'queues', 'no-config'));
    await fs.mkdir(path.join(t.root, 'queues', '.trash'));
    await fs.mkdir(path.join(t.root, 'queues', 'bad name'));
    await fs.writeFile(path.join(t.root, 'queues', 'bad name', 'config.json'), '{}');
    // The test means something only while the directory is not read in that order already.
    const listed = (await fs.readdir(path.join(t.root, 'queues'))).filter((n) => CREATED.includes(n));
    expect(listed).not.toEqual(NAME_ORDER);

    expect(orderQueues(CREATED)).toEqual(NAME_ORDER);
    expect(await discoverQueues(t.root)).toEqual(NAME_ORDER);
  });

  it("leaves out a queue whose name does not fit this root's socket paths, telling why; one exactly at the limit is listed", async () => {
    const max = queueNameRoom(t.root).maxBytes;
    await addQueue(t.root, 'n'.repeat(max));
    await addQueue(t.root, 'n'.repeat(max + 1));
    const unfit: Array<[string, string]> = [];
    expect(await discoverQueues(t.root, (name, reason) => unfit.push([name, reason]))).toEqual(['n'.repeat(max)]);
    expect(unfit).toEqual([
      [
        'n'.repeat(max + 1),
        `queue name: expected at most ${max} characters for this root (socket path queues/<q>/events.sock must fit in 107 bytes), received ${max + 1} characters`,
      ],
    ]);
  });

  it('rq asks every queue in that order: with none running (rq-mgr up), `rq tagged` names each in turn', async () => {
    for (const n of CREATED) await addQueue(t.root, n);
    // A stand-in rq-mgr that answers ping: with none, rq says rq-mgr is not running instead (test/cli/fan-out.test.ts).
    const mgr = await listenSocket({ path: rootPaths(t.root).mgrSock, proto: 'rq1', log: silentLogger(), handle: () => '["pong"]' });
    try {
      const r = await runRq(['tagged', '--tag', 'x'], { root: t.root });
      expect(r.code).toBe(1);
      expect(r.out).toEqual(['fail 0']);
      expect(r.err.map((l) => /^rq: queue (\S+): its process does not answer/u.exec(l)?.[1])).toEqual(NAME_ORDER);
    } finally {
      await mgr.close();
    }
  });
});
