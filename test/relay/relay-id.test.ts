// job/relay_id at its edges: blank or padded contents, a relay_id that cannot be read, removing one that is not there.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRelayId, removeRelayId } from '../../src/relay/relay-id.js';

describe('job/relay_id edges', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-relayid-edges-'));
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('reads a padded id trimmed, and a blank file as none', async () => {
    await fs.writeFile(path.join(dir, 'relay_id'), '  http://b/q/t/20261121.1643.46.613.1\n');
    expect(await readRelayId(dir)).toBe('http://b/q/t/20261121.1643.46.613.1');
    await fs.writeFile(path.join(dir, 'relay_id'), ' \n');
    expect(await readRelayId(dir)).toBeNull();
  });

  it('a relay_id that cannot be read is an error, not "none" (a second far copy would follow)', async () => {
    await fs.mkdir(path.join(dir, 'relay_id'));
    await expect(readRelayId(dir)).rejects.toMatchObject({ code: 'EISDIR' });
  });

  it('removing one that is not there is no error', async () => {
    await expect(removeRelayId(dir)).resolves.toBeUndefined();
  });
});
