// relayMessage's reading of the far host's replies at their edges: which refusal is "cannot find message", HTTP errors as one short line, a prep that names no full id, what the attach and commit requests carry.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { readRelayId } from '../../src/relay/relay-id.js';
import { FAR, ID1, commit, prepOk, scriptedFarHost, state } from './far-host.js';

const far = scriptedFarHost();
const commitCall = `POST /q/test/${ID1}`;
const stateCall = `GET /q/test/${ID1}/state.json`;
/** Another attempt from scratch: no relay_id, no calls seen. */
async function fresh(): Promise<void> {
  await fs.rm(path.join(far.jobDir, 'relay_id'), { force: true });
  far.calls.length = 0;
}

describe('commit refusals', () => {
  it('"cannot find message" with its code (a far rq) is not-found whatever its text: the state check finds the copy committed', async () => {
    for (const text of ['cannot find message', 'no message 1 in prep']) {
      await fresh();
      far.routes = [prepOk(ID1), commit(['fail', text, 'RQ_ERR_CANNOT_FIND_MESSAGE']), state(ID1, { body: '["err"]' })];
      const r = await far.relay();
      expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID1) });
      expect(far.calls).toEqual(['POST /q/test/new_message', commitCall, stateCall]);
      expect(r.logs.at(-1)).toBe(`commit answered cannot find message, but ${FAR(ID1)} is already err: committed by an earlier attempt`);
    }
  });

  it('the same words under another code, or other words without one, are a plain retry: no state check', async () => {
    const cases: [unknown[], string][] = [
      [['fail', 'cannot find message', 'RQ_ERR_NO_REPLY'], 'commit: ["fail","cannot find message","RQ_ERR_NO_REPLY"]'],
      [['fail', 'cannot find message 1'], 'commit: ["fail","cannot find message 1"]'],
      [['fail', 'queue is full'], 'commit: ["fail","queue is full"]'],
      [['fail', 'y'.repeat(300)], `commit: ${JSON.stringify(['fail', 'y'.repeat(300)]).slice(0, 160)}`],
    ];
    for (const [reply, reason] of cases) {
      await fresh();
      far.routes = [prepOk(ID1), commit(reply)];
      expect((await far.relay()).outcome).toEqual({ kind: 'retry', reason });
      expect(far.calls).toEqual(['POST /q/test/new_message', commitCall]);
    }
  });

  it('not found, but the copy is still in prep or of no known state: a retry that says which, the relay_id kept', async () => {
    far.routes.push(prepOk(ID1), commit(['fail', 'cannot find message']), state(ID1, { body: '["prep"]' }));
    expect((await far.relay()).outcome).toEqual({ kind: 'retry', reason: `commit: cannot find message, yet ${FAR(ID1)} is in prep` });
    far.routes = [prepOk(ID1), commit(['fail', 'cannot find message']), state(ID1, { status: 500, body: '' })];
    await fresh();
    expect((await far.relay()).outcome).toEqual({ kind: 'retry', reason: 'state check: HTTP 500' });
    expect(await readRelayId(far.jobDir)).toBe(FAR(ID1));
  });

  it('an HTTP error is a retry; the request carries the commit form', async () => {
    far.routes.push(prepOk(ID1), [/^POST \/q\/test\/[\d.]+$/, () => ({ status: 500, body: 'oops' })]);
    const r = await far.relay();
    expect(r.outcome).toEqual({ kind: 'retry', reason: 'commit: HTTP 500 oops' });
    const form = new URLSearchParams(far.requests.at(-1)!.body);
    expect(Object.fromEntries(form)).toEqual({ x_format: 'json', _method: 'commit', msg_id: ID1 });
    expect(r.logs).toEqual([`attempting remote http://127.0.0.1:${far.port}/q/test`, `prep ok: far copy ${FAR(ID1)}`]);
  });
});

describe('prep replies', () => {
  it('an HTTP error page is one line of its text, tags and runs of space dropped, at most 120 characters; none for an empty body', async () => {
    const cases: [string, string][] = [
      ['<html>\n<body><h1>502   Bad\tGateway</h1></body>\n</html>\n', 'prep: HTTP 502 502 Bad Gateway'],
      ['', 'prep: HTTP 502'],
      ['<p> </p>', 'prep: HTTP 502'],
      ['<p>Bad</p><p>Gateway</p>', 'prep: HTTP 502 Bad Gateway'],
      ['x'.repeat(200), `prep: HTTP 502 ${'x'.repeat(120)}`],
    ];
    for (const [body, reason] of cases) {
      far.routes = [[/new_message/, () => ({ status: 502, body })]];
      expect((await far.relay()).outcome).toEqual({ kind: 'retry', reason });
    }
  });

  it('a refusal is quoted, at most 160 characters of it', async () => {
    const body = JSON.stringify(['fail', 'z'.repeat(300)]);
    far.routes.push([/new_message/, () => ({ body })]);
    expect((await far.relay()).outcome).toEqual({ kind: 'retry', reason: `prep: ${body.slice(0, 160)}` });
  });

  it('the far host not listening: a retry naming the prep', async () => {
    await new Promise((r) => far.server.close(r));
    expect((await far.relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/^prep: .*ECONNREFUSED/) });
  });

  it('an ok that names no full message id: a retry, nothing stored, nothing committed', async () => {
    far.routes.push([/new_message/, () => ({ body: JSON.stringify(['ok', ID1]) })]);
    expect((await far.relay()).outcome).toEqual({ kind: 'retry', reason: `prep: the far host answered "${ID1}", not a full message id` });
    expect(await readRelayId(far.jobDir)).toBeNull();
    expect(far.calls).toEqual(['POST /q/test/new_message']);
  });
});

describe('attach', () => {
  const BYTES = crypto.randomBytes(2 * 1048576);
  const MD5 = crypto.createHash('md5').update(BYTES).digest('hex');
  beforeEach(async () => {
    await fs.mkdir(path.join(far.msgDir, 'attach'));
    await fs.writeFile(path.join(far.msgDir, 'attach', 'a.bin'), BYTES);
    // A directory in attach/ is no attachment.
    await fs.mkdir(path.join(far.msgDir, 'attach', 'sub'));
  });

  it('posts the file as multipart to the copy, asking for JSON; reports its progress and its rate in the log', async () => {
    far.routes.push(prepOk(ID1), [/attach\/new$/, () => ({ body: JSON.stringify(['ok', `${MD5}-Attached successfully`]) })], commit(['ok', 'msg commited']));
    const times = [1000, 1500];
    const r = await far.relay({ now: () => times.shift() ?? 9999 });
    expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID1) });
    expect(far.calls).toEqual(['POST /q/test/new_message', `POST /q/test/${ID1}/attach/new`, commitCall]);
    const req = far.requests[1];
    expect(req.headers.accept).toBe('application/json');
    const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(String(req.headers['content-type']))![1];
    expect(req.body).toContain(`--${boundary}\r\nContent-Disposition: form-data; name="msg_id"\r\n\r\n${ID1}\r\n`);
    expect(req.body).toContain(`--${boundary}\r\nContent-Disposition: form-data; name="pathname"\r\n\r\na.bin\r\n`);
    expect(req.body).toContain(`--${boundary}\r\nContent-Disposition: form-data; name="x_format"\r\n\r\njson\r\n`);
    expect(req.body).toContain(`name="filedata"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    expect(r.progress[1]).toBe(`attach a.bin (${Number(req.headers['content-length'])} bytes) to ${FAR(ID1)}`);
    const size = Number(req.headers['content-length']);
    expect(r.logs).toContain(`attached a.bin: ${size} bytes in 500 ms (${(size / 1048576 / 0.5).toFixed(1)} MB/s), md5 ${MD5}`);
  });

  it('"cannot find message" there: the state check decides, the step named in the log', async () => {
    far.routes.push(prepOk(ID1), [/attach\/new$/, () => ({ body: '["fail","cannot find message"]' })], state(ID1, { body: '["run"]' }));
    const r = await far.relay();
    expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID1) });
    expect(r.logs.at(-1)).toBe(`attach a.bin answered cannot find message, but ${FAR(ID1)} is already run: committed by an earlier attempt`);
  });

  it('another refusal (quoted, at most 160 characters) or an HTTP error is a retry naming the file; no commit', async () => {
    far.routes.push(prepOk(ID1), [/attach\/new$/, () => ({ body: '["fail","disk full"]' })]);
    expect((await far.relay()).outcome).toEqual({ kind: 'retry', reason: 'attach a.bin: ["fail","disk full"]' });
    const long = JSON.stringify(['fail', 'v'.repeat(300)]);
    far.routes = [state(ID1, { body: '["prep"]' }), [/attach\/new$/, () => ({ body: long })]];
    expect((await far.relay()).outcome).toEqual({ kind: 'retry', reason: `attach a.bin: ${long.slice(0, 160)}` });
    far.routes = [state(ID1, { body: '["prep"]' }), [/attach\/new$/, () => ({ status: 500, body: 'boom' })]];
    expect((await far.relay()).outcome).toEqual({ kind: 'retry', reason: 'attach a.bin: HTTP 500 boom' });
    far.routes = [state(ID1, { body: '["prep"]' }), [/attach\/new$/, () => ({ body: `<html>${'w'.repeat(200)}` })]];
    expect((await far.relay()).outcome).toEqual({ kind: 'fail', reason: `BAD JSON from attach a.bin: <html>${'w'.repeat(114)}` });
    far.routes = [state(ID1, { body: '["prep"]' }), [/attach\/new$/, () => 'hangup']];
    expect((await far.relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/^attach a\.bin: .*socket hang up/) });
    expect(far.calls.filter((c) => c === commitCall)).toEqual([]);
  });
});

describe('attach/ that cannot be listed', () => {
  it('is an error, never a relay without the attachments', async () => {
    await fs.writeFile(path.join(far.msgDir, 'attach'), 'not a dir');
    far.routes.push(prepOk(ID1), commit(['ok', 'msg commited']));
    await expect(far.relay()).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect(far.calls).toEqual(['POST /q/test/new_message']);
  });
});
