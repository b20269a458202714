// relayMessage's resume decision at its edges (docs/relay.md, "Resume or prep"): a stored relay_id whose far copy is committed in any state, in prep, gone, unreadable or of no known state, and what each writes to the message's log.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRelayId, writeRelayId } from '../../src/relay/relay-id.js';
import { FAR, ID1, ID2, type Route, commit, prepOk, queueStatus, scriptedFarHost, state } from './far-host.js';

const far = scriptedFarHost();
const stateCall = `GET /q/test/${ID2}/state.json`;

describe('a stored relay_id', () => {
  it('committed there in any state (que, run, done, relayed, err): relayed by what is stored, nothing sent again', async () => {
    for (const s of ['que', 'run', 'done', 'relayed', 'err']) {
      await writeRelayId(far.jobDir, FAR(ID2));
      far.calls.length = 0;
      far.routes = [state(ID2, { body: `["${s}"]\n` })];
      const r = await far.relay();
      expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID2) });
      expect(far.calls).toEqual([stateCall]);
      expect(r.logs).toEqual([`far copy ${FAR(ID2)} is already ${s}: an earlier attempt committed it`]);
      expect(r.progress).toEqual([]);
    }
  });

  it('still in prep: resumed, and the log says so', async () => {
    await writeRelayId(far.jobDir, FAR(ID2));
    far.routes.push(state(ID2, { body: '["prep"]' }), commit(['ok', 'msg commited']));
    const r = await far.relay();
    expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID2) });
    expect(r.logs).toEqual([`resuming far copy ${FAR(ID2)} (still in prep)`, `commit ok: ${FAR(ID2)}`]);
  });

  it('gone with its queue (the queue 404 too): a fresh copy, made in the same attempt, the log saying why', async () => {
    await writeRelayId(far.jobDir, FAR(ID2));
    far.routes.push(prepOk(ID1), commit(['ok', 'msg commited']));
    const r = await far.relay();
    expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID1) });
    expect(far.calls).toEqual([stateCall, 'GET /q/test.json', 'POST /q/test/new_message', `POST /q/test/${ID1}`]);
    expect(r.logs).toEqual([
      `far copy ${FAR(ID2)} is gone: making a new one`,
      `attempting remote http://127.0.0.1:${far.port}/q/test`,
      `prep ok: far copy ${FAR(ID1)}`,
      `commit ok: ${FAR(ID1)}`,
    ]);
    expect(await readRelayId(far.jobDir)).toBe(FAR(ID1));
  });

  it('that is no full message id: discarded with a log line, and a fresh copy made', async () => {
    await fs.writeFile(path.join(far.jobDir, 'relay_id'), 'garbage\n');
    far.routes.push(prepOk(ID1), commit(['ok', 'msg commited']));
    const r = await far.relay();
    expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID1) });
    expect(r.logs[0]).toBe('job/relay_id holds "garbage", which is not a full message id: discarded');
    expect(far.calls).toEqual(['POST /q/test/new_message', `POST /q/test/${ID1}`]);
    expect(await readRelayId(far.jobDir)).toBe(FAR(ID1));
  });

  it('a state that is no state, or no array: a retry quoting at most 120 characters of it, the relay_id kept, nothing sent', async () => {
    for (const body of ['["gone"]', '{"0":"done"}', '[7]', 'not json', `["${'q'.repeat(200)}"]`]) {
      await writeRelayId(far.jobDir, FAR(ID2));
      far.calls.length = 0;
      far.routes = [state(ID2, { body })];
      expect((await far.relay()).outcome).toEqual({ kind: 'retry', reason: `state check: unexpected reply ${body.slice(0, 120)}` });
      expect(far.calls).toEqual([stateCall]);
      expect(await readRelayId(far.jobDir)).toBe(FAR(ID2));
    }
  });

  it('the state check cut off: a retry naming the step', async () => {
    await writeRelayId(far.jobDir, FAR(ID2));
    far.routes.push([/state\.json$/, () => 'hangup']);
    expect((await far.relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/^state check: .*socket hang up/) });
  });

  it('a 404 for the copy proves it gone only when its queue answers with a status other than DOWN', async () => {
    const cases: [Route, string][] = [
      [[/^GET \/q\/test\.json$/, () => ({ status: 500, body: '{"status":"UP"}' })], 'state check: far queue test is not answering (HTTP 500)'],
      [[/^GET \/q\/test\.json$/, () => ({ body: 'hello' })], 'state check: far queue test is not answering (HTTP 200)'],
      [[/^GET \/q\/test\.json$/, () => ({ body: '{"status":7}' })], 'state check: far queue test is not answering (HTTP 200)'],
      [queueStatus('DOWN'), 'state check: far queue test is DOWN'],
    ];
    for (const [route, reason] of cases) {
      await writeRelayId(far.jobDir, FAR(ID2));
      far.routes = [route];
      expect((await far.relay()).outcome).toEqual({ kind: 'retry', reason });
      expect(await readRelayId(far.jobDir)).toBe(FAR(ID2));
    }
    far.routes = [[/^GET \/q\/test\.json$/, () => 'hangup']];
    expect((await far.relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/^queue status check: .*socket hang up/) });
  });

  it('no message file: fails without asking the far host for a copy', async () => {
    await fs.rm(path.join(far.msgDir, 'msg'));
    const r = await far.relay();
    expect(r.outcome).toMatchObject({ kind: 'fail', reason: expect.stringMatching(/^cannot read the message file .*\/msg: ENOENT/) });
    expect(r.outcome).toMatchObject({ reason: expect.stringContaining(path.join(far.msgDir, 'msg')) });
    expect(far.calls).toEqual([]);
  });
});

describe('a host only asked (askOnly: a pool host no longer up in the fleet)', () => {
  it('is asked about the stored copy and sent nothing else: committed is relayed, prep or gone is a retry', async () => {
    await writeRelayId(far.jobDir, FAR(ID2));
    far.routes = [state(ID2, { body: '["done"]' })];
    expect((await far.relay({ askOnly: 'b is not up in the fleet now' })).outcome).toEqual({ kind: 'relayed', fullId: FAR(ID2) });
    far.calls.length = 0;
    far.routes = [state(ID2, { body: '["prep"]' }), commit(['ok', 'msg commited'])];
    expect((await far.relay({ askOnly: 'b is not up in the fleet now' })).outcome).toEqual({
      kind: 'retry',
      reason: `b is not up in the fleet now: far copy ${FAR(ID2)} is in prep there, nothing is sent to it`,
    });
    expect(far.calls).toEqual([stateCall]);
    far.calls.length = 0;
    far.routes = [prepOk(ID1), commit(['ok', 'msg commited'])];
    expect((await far.relay({ askOnly: 'b is not up in the fleet now' })).outcome).toEqual({
      kind: 'retry',
      reason: 'b is not up in the fleet now: nothing is sent to it',
    });
    expect(far.calls).toEqual([stateCall, 'GET /q/test.json']);
  });
});
