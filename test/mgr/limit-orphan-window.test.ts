// The window between a queue's SIGKILL and its successor's limit_reset (rq-beyond §B12.5, crash matrix "limited run"): the dead queue's slots stay taken while its scripts may still run, so an acquire from another queue waits.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { alive, killLeftoverGroups, pidInFile } from '../helpers/process-groups.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';
import { Limits } from './limits-harness.js';

/** Hangs (writing its pid to $RQ_PARAM2) until the file $RQ_PARAM2.go exists; then a run ends done at once. */
const HOLD_SH = '#!/bin/bash\nif [ -e "$RQ_PARAM2.go" ]; then echo "done released" >&3; exit 0; fi\necho "$$" > "$RQ_PARAM2"\nsleep 1000 & wait\n';

const groups = killLeftoverGroups();
let t: TestRoot | undefined;
let mgr: MgrProc | undefined;
afterEach(async () => {
  await mgr?.stop();
  await t?.cleanup();
  mgr = t = undefined;
});

it("an acquire from another queue while a killed queue's successor has not reset waits: the orphaned slot is not handed out while its script runs", async () => {
  t = await makeRoot();
  const script = path.join(t.root, 'hold.sh');
  await fs.writeFile(script, HOLD_SH, { mode: 0o755 });
  await fs.writeFile(rootPaths(t.root).limitsFile, JSON.stringify({ orph: 1 }));
  await addQueue(t.root, 'oa', { script });
  await addQueue(t.root, 'ob');
  mgr = await MgrProc.start(t.root);
  const L = new Limits(t.root, mgr, []);
  const oaPid = await mgr.waitQueueUp('oa');
  await mgr.waitQueueUp('ob');
  await L.settled();

  const pidFile = path.join(t.root, 'oa.pid');
  const a = await L.send('oa', { param2: pidFile, limit: 'orph' });
  const old = await pidInFile(pidFile);
  groups.push(old);

  // The successor cannot come up while oa's config.json is unreadable: each start dies before its
  // recovery and its limit_reset, and rq-mgr restarts it with back-off. That holds the window open.
  const configFile = queuePaths(t.root, 'oa').configFile;
  const config = await fs.readFile(configFile, 'utf8');
  await fs.writeFile(configFile, '{');
  process.kill(oaPid, 'SIGKILL');
  await waitFor(async () => (await L.status('orph'))?.holders.every((h) => h.orphaned && h.ref === `oa/${a}`), "oa's slot to be orphaned");

  const b = await L.send('ob', { param1: 'done', limit: 'orph' });
  const seen = await waitFor(async () => {
    const s = await L.status('orph');
    return s && [...s.holders, ...s.waiting].some((x) => x.ref === `ob/${b}`) ? s : false;
  }, "ob's acquire to reach rq-mgr");
  expect(seen.holders).toEqual([{ ref: `oa/${a}`, orphaned: true, queue: 'oa', since: expect.any(Number), granted_at: expect.any(Number) }]);
  expect(seen.waiting.map((w) => w.ref)).toEqual([`ob/${b}`]);
  expect(await mgr.q('ob', 'get_message_state', { msg_id: b })).toEqual(['ok', 'que']);
  // Still in the window: the old script runs and the orphan is still counted after ob was answered.
  expect(alive(old)).toBe(true);
  expect((await L.status('orph'))?.holders.map((h) => [h.ref, h.orphaned])).toEqual([[`oa/${a}`, true]]);

  // The successor starts: its recovery kills the old script, its reset frees the slot; oa's message
  // (older) goes first and ends at once, then ob's runs.
  await fs.writeFile(`${pidFile}.go`, '');
  await fs.writeFile(configFile, config);
  await waitFor(async () => (await mgr!.q('ob', 'wait_message', { msg_id: b, timeout: 5 }))[0] === 'ok', 'ob to finish', 40_000);
  expect(alive(old)).toBe(false);
  expect((await mgr.q('ob', 'get_message_state', { msg_id: b }))[1]).toBe('done');
  expect((await mgr.q('oa', 'get_message_state', { msg_id: a }))[1]).toBe('done');
  await waitFor(async () => (await L.status('orph')) === undefined, 'orph to be free');
}, 60_000);
