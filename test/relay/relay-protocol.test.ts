// relayMessage against a scripted far host: resume by job/relay_id, the state check after "cannot find message", reply checks.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRelayId, writeRelayId } from '../../src/relay/relay-id.js';
import { FAR, ID1, ID2, commit, prepOk, queueStatus, scriptedFarHost, state } from './far-host.js';

const far = scriptedFarHost();
const relay = () => far.relay();

describe('relayMessage', () => {
  it('prep (count+1, _method prep), relay_id stored, commit, relayed', async () => {
    let prepBody = '';
    far.routes.push(
      [/^POST \/q\/test\/new_message$/, (c) => ((prepBody = c.body), { body: JSON.stringify(['ok', FAR(ID1)]) })],
      commit(['ok', 'msg commited']),
    );
    const r = await relay();
    expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID1) });
    const form = new URLSearchParams(prepBody);
    expect(form.get('x_format')).toBe('json');
    expect(JSON.parse(form.get('mesg')!)).toEqual({
      dest: 'http://h/q/test',
      src: 'unit',
      count: 1,
      max_count: 15,
      orig_msg_id: 'http://a/q/relay/x',
      _method: 'prep',
    });
    expect(await readRelayId(far.jobDir)).toBe(FAR(ID1));
    expect(far.calls).toEqual(['POST /q/test/new_message', `POST /q/test/${ID1}`]);
    expect(r.progress).toEqual([`prep http://127.0.0.1:${far.port}/q/test/new_message`, `commit ${FAR(ID1)}`]);
  });

  it('commit answered "cannot find message" while the far copy is committed: relayed, no second copy', async () => {
    far.routes.push(prepOk(ID1), commit(['fail', 'cannot find message']), state(ID1, { body: '["que"]' }));
    const r = await relay();
    expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID1) });
    expect(far.calls.filter((c) => c.includes('new_message'))).toHaveLength(1);
    expect(r.logs.join('\n')).toMatch(/commit answered cannot find message, but .* is already que/);
  });

  it('commit answered "cannot find message" and the far copy is gone: relay_id dropped, retry', async () => {
    far.routes.push(prepOk(ID1), commit(['fail', 'cannot find message']), queueStatus('UP'));
    const r = await relay();
    expect(r.outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/is gone; a new one will be made/) });
    expect(await readRelayId(far.jobDir)).toBeNull();
  });

  it('a 404 for the far copy while its queue is DOWN proves nothing: retry, relay_id kept', async () => {
    await writeRelayId(far.jobDir, FAR(ID2));
    far.routes.push(queueStatus('DOWN'));
    expect((await relay()).outcome).toEqual({ kind: 'retry', reason: 'state check: far queue test is DOWN' });
    expect(await readRelayId(far.jobDir)).toBe(FAR(ID2));
    expect(far.calls).toEqual([`GET /q/test/${ID2}/state.json`, 'GET /q/test.json']);
  });

  it('a stored relay_id still in prep is resumed: no new prep, attach and commit go to it', async () => {
    await writeRelayId(far.jobDir, FAR(ID2));
    await fs.mkdir(path.join(far.msgDir, 'attach'));
    await fs.writeFile(path.join(far.msgDir, 'attach', 'a.txt'), 'abc');
    await fs.writeFile(path.join(far.msgDir, 'attach', '.hidden'), 'no');
    const md5 = crypto.createHash('md5').update('abc').digest('hex');
    far.routes.push(
      state(ID2, { body: '["prep"]' }),
      [/^POST \/q\/test\/[\d.]+\/attach\/new$/, () => ({ body: JSON.stringify(['ok', `${md5}-Attached successfully`]) })],
      commit(['ok', 'msg commited']),
    );
    const r = await relay();
    expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID2) });
    expect(far.calls).toEqual([`GET /q/test/${ID2}/state.json`, `POST /q/test/${ID2}/attach/new`, `POST /q/test/${ID2}`]);
  });

  it('a stored relay_id already committed is relayed without sending anything', async () => {
    await writeRelayId(far.jobDir, FAR(ID2));
    far.routes.push(state(ID2, { body: '["done"]' }));
    expect((await relay()).outcome).toEqual({ kind: 'relayed', fullId: FAR(ID2) });
    expect(far.calls).toHaveLength(1);
  });

  it('a stored relay_id the far host no longer knows gets a fresh copy in the same attempt', async () => {
    await writeRelayId(far.jobDir, FAR(ID2));
    far.routes.push(prepOk(ID1), commit(['ok', 'msg commited']), queueStatus('PAUSE'));
    expect((await relay()).outcome).toEqual({ kind: 'relayed', fullId: FAR(ID1) });
    expect(await readRelayId(far.jobDir)).toBe(FAR(ID1));
  });

  it('the state check failing (far host erroring) is a retry, the relay_id kept', async () => {
    await writeRelayId(far.jobDir, FAR(ID2));
    far.routes.push(state(ID2, { status: 503, body: '["fail","queue test did not answer"]' }));
    expect((await relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/^state check: HTTP 503/) });
    expect(await readRelayId(far.jobDir)).toBe(FAR(ID2));
  });

  it('attach: md5 mismatch retries, unparsable reply fails (BAD JSON), 413 fails', async () => {
    await fs.mkdir(path.join(far.msgDir, 'attach'));
    await fs.writeFile(path.join(far.msgDir, 'attach', 'a.txt'), 'abc');
    far.routes.push(prepOk(ID1), [/attach\/new$/, () => ({ body: JSON.stringify(['ok', '00000000000000000000000000000000-Attached successfully']) })]);
    expect((await relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/md5 mismatch/) });
    far.routes = [state(ID1, { body: '["prep"]' }), [/attach\/new$/, () => ({ body: '<html>oops</html>' })]];
    expect((await relay()).outcome).toMatchObject({ kind: 'fail', reason: expect.stringMatching(/^BAD JSON from attach a\.txt/) });
    far.routes = [state(ID1, { body: '["prep"]' }), [/attach\/new$/, () => ({ status: 413, body: '413 - Upload too large' })]];
    expect((await relay()).outcome).toMatchObject({ kind: 'fail', reason: expect.stringMatching(/^attach a\.txt: HTTP 413/) });
  });

  it('prep refused or unreachable, commit reply lost: retries', async () => {
    far.routes.push([/new_message/, () => ({ status: 503, body: '503 - Service Unavailable - Operationally Down' })]);
    expect((await relay()).outcome).toEqual({ kind: 'retry', reason: 'prep: HTTP 503 503 - Service Unavailable - Operationally Down' });
    far.routes = [[/new_message/, () => ({ body: '["fail","status: DOWN"]' })]];
    expect((await relay()).outcome).toEqual({ kind: 'retry', reason: 'prep: ["fail","status: DOWN"]' });
    far.routes = [prepOk(ID1), [/^POST \/q\/test\/[\d.]+$/, () => 'hangup']];
    expect((await relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/^commit: .*socket hang up/) });
    await new Promise((r) => far.server.close(r));
    expect((await relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/ECONNREFUSED/) });
    far.server.listen(far.port, '127.0.0.1');
  });
});
