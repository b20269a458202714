// Blanks made by the addon come with their msg open: every create that takes one closes it, on success and on every failure.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openFilesUnder as openUnder } from '../helpers/open-files.js';
import { waitFor } from '../helpers/rq-root.js';
import { type TempSpool, caught, ls, tempSpool } from '../helpers/temp-spool.js';

describe.each([
  ['journaled', {}],
  ['without a journal', { journal: false as const }],
])('blank msg descriptors, %s', (_, deps) => {
  let t: TempSpool;
  afterEach(async () => {
    await t.spool.close();
    await t.cleanup();
  });
  const blankDir = () => path.join(t.spool.paths.dir, '.blank');
  /** A full pool of 4 addon-made blanks: 4 msg descriptors open, none other under .blank. */
  const fullPool = async () => {
    t = await tempSpool('test', { blanks: 4, ...deps });
    await t.spool.create({ dest: 'test' }, { commit: true });
    await waitFor(async () => openUnder(blankDir()).length === 4 && (await ls(blankDir())).length === 4, 'four blanks, each with its msg open');
  };

  it('a create that succeeds closes the msg it was given, once durable', async () => {
    await fullPool();
    for (let i = 0; i < 12; i++) await t.spool.create({ dest: 'test', param1: String(i) }, { commit: i % 2 === 0 });
    await t.spool.close();
    expect(openUnder(t.root)).toEqual([]);
  });

  it('a create whose rename fails closes the msg it was given', async () => {
    await fullPool();
    const que = t.spool.paths.state.que;
    await fs.rename(que, `${que}.away`);
    await fs.writeFile(que, 'not a directory');
    try {
      for (let i = 0; i < 6; i++) expect((await caught(t.spool.create({ dest: 'test' }, { commit: true }))).code).toBe('RQ_ERR_DISK');
    } finally {
      await fs.rm(que);
      await fs.rename(`${que}.away`, que);
    }
    await t.spool.close();
    expect(openUnder(t.root)).toEqual([]);
  });

  it('a create whose `before` rejects closes the msg it was given', async () => {
    await fullPool();
    for (let i = 0; i < 6; i++)
      await expect(t.spool.createAfter({ dest: 'test' }, { commit: true }, async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    await t.spool.close();
    expect(openUnder(t.root)).toEqual([]);
  });

  it('close() closes the msg of every blank never taken', async () => {
    await fullPool();
    await t.spool.close();
    expect(openUnder(t.root)).toEqual([]);
  });

  it("a blank removed behind the queue's back: the create still succeeds, its directory made the slow way", async () => {
    await fullPool();
    await fs.rm(blankDir(), { recursive: true, force: true });
    const msg = await t.spool.create({ dest: 'test', param1: 'after' }, { commit: true });
    expect(await t.spool.readMessage('que', msg.msg_id)).toMatchObject({ param1: 'after' });
    await t.spool.close();
    expect(openUnder(t.root)).toEqual([]);
  });
});
