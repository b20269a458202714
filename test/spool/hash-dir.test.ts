// Hash directories: ids listed newest first at every level (day, hour, minute, id), counted, cut at a limit; stray names ignored.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashCount, hashList, hashPath } from '../../src/spool/hash-dir.js';
import { readMessage } from '../../src/spool/message-files.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-hash-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

// Each pair differs at exactly one level, so an ascending sort at any level shows.
const IDS = [
  '20261120.2359.59.999.1', // older day
  '20261121.0900.00.000.2', // same day, older hour
  '20261121.1000.00.000.3', // same hour, older minute
  '20261121.1001.00.000.4',
  '20261121.1001.30.000.5', // same minute, later id
];

describe('hashList / hashCount', () => {
  it('lists newest first at every level, cuts at the limit, and counts every id', async () => {
    for (const id of [...IDS].reverse()) await fs.mkdir(hashPath(dir, id)!, { recursive: true });
    // Names that are not hash levels are not messages.
    await fs.mkdir(path.join(dir, 'tmp'));
    await fs.mkdir(path.join(dir, '20261121', 'xx'), { recursive: true });
    expect(await hashList(dir)).toEqual([...IDS].reverse());
    expect(await hashList(dir, 2)).toEqual([IDS[4], IDS[3]]);
    expect(await hashList(dir, 0)).toEqual([]);
    expect(await hashCount(dir)).toBe(5);
    expect(await hashList(path.join(dir, 'none'))).toEqual([]);
    expect(hashPath(dir, 'nope')).toBeNull();
  });
});

describe('readMessage', () => {
  it('refuses a msg file that is JSON but no message object, naming the id', async () => {
    for (const text of ['null', '5', '"x"', '{"dest":"q"}']) {
      await fs.writeFile(path.join(dir, 'msg'), text);
      await expect(readMessage(dir, 'the-id'), text).rejects.toThrow('msg of the-id is not a message object');
    }
  });
});
