// Access control and hostile input: basic auth, relative_root, path traversal in every name, symlinked job files.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { rawRequest } from '../security/fuzz-helpers.js';
import { type WebRoot, cookiesOf, postForm, rawGet, send, startWebRoot, treeSnapshot, waitState } from './web-root.js';

describe('basic auth and relative_root', () => {
  let w: WebRoot;
  const auth = { authorization: `Basic ${Buffer.from('admin:s3cret').toString('base64')}` };
  beforeAll(async () => {
    w = await startWebRoot({ config: { relative_root: '/therq/', basic_auth: { realm: 'rq-test', users: { admin: 's3cret' } } } });
  }, 60_000);
  afterAll(async () => {
    await w?.stop();
  });

  it('401 with the realm without (or with wrong) credentials, 200 with them', async () => {
    const none = await fetch(`${w.base}/q.json`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm="rq-test"/);
    const wrong = await fetch(`${w.base}/q.json`, { headers: { authorization: `Basic ${Buffer.from('admin:nope').toString('base64')}` } });
    expect(wrong.status).toBe(401);
    const unknown = await fetch(`${w.base}/q.json`, { headers: { authorization: `Basic ${Buffer.from('root:s3cret').toString('base64')}` } });
    expect(unknown.status).toBe(401);
    // Each says what was expected and what came, the user's name but never the password.
    const expected = 'Unauthorized: expected the name and password of a basic_auth user (config/config.json), received';
    expect(await none.json()).toEqual(['fail', `${expected} no Authorization header`]);
    expect(await wrong.json()).toEqual(['fail', `${expected} user "admin" with a password that does not match`]);
    expect(await unknown.json()).toEqual(['fail', `${expected} user "root" with a password that does not match`]);
    const junk = await fetch(`${w.base}/q.txt`, { headers: { authorization: 'Bearer abc' } });
    expect([junk.status, await junk.text()]).toEqual([401, `401 - ${expected} an Authorization header that is not Basic with a base64 name:password`]);
    // A request not let in is answered in its URL's format (text here), whatever a field of its body asks for.
    const form = new FormData();
    form.set('x_format', 'json');
    const posted = await fetch(`${w.base}/q/test/new_message`, { method: 'POST', body: form });
    expect([posted.status, posted.headers.get('content-type')]).toEqual([401, 'text/plain; charset=utf-8']);
    const ok = await fetch(`${w.base}/q.json`, { headers: auth });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual(['test']);
    // Static files and the 404 page are behind auth too.
    expect((await fetch(`${w.base}/css/rq.css`)).status).toBe(401);
  });

  it('a URL the router refuses (a broken %-escape, a path part too long) passes the Host and credential checks first, then is told in the client format', async () => {
    const broken = `${w.base}/q/%ff`;
    expect((await rawGet(broken, { host: 'evil.example', ...auth })).status).toBe(421);
    const foreign = await rawGet(`${broken}?x_format=json`, { host: 'evil.example' });
    expect([foreign.status, JSON.parse(foreign.body)[0]]).toEqual([421, 'fail']);
    const none = await rawGet(broken);
    expect([none.status, none.headers['www-authenticate']]).toEqual([401, 'Basic realm="rq-test", charset="UTF-8"']);
    // The same header as on any other route.
    expect((await fetch(`${w.base}/q.json`)).headers.get('www-authenticate')).toBe(none.headers['www-authenticate']);
    expect(await rawGet(`${broken}?x_format=json`, auth)).toMatchObject({
      status: 400,
      body: JSON.stringify(['fail', 'URL: expected a path whose %-escapes are UTF-8, received "/therq/q/%ff"']),
    });
    expect(await rawGet(broken, auth)).toMatchObject({ status: 400, body: '400 - URL: expected a path whose %-escapes are UTF-8, received "/therq/q/%ff"' });
    const json = await rawGet(broken, { ...auth, accept: 'application/json' });
    expect([json.status, JSON.parse(json.body)]).toEqual([400, ['fail', 'URL: expected a path whose %-escapes are UTF-8, received "/therq/q/%ff"']]);
    // Its format: JSON typed as JSON, text as text; x_format wins over Accept either way.
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    const asked = await rawGet(`${broken}?x_format=html`, { ...auth, accept: 'application/json' });
    expect([asked.status, asked.headers['content-type'], asked.body.startsWith('400 - URL:')]).toEqual([400, 'text/plain; charset=utf-8', true]);
    // Credentials are checked there as strictly as on any route: a wrong password, a pair without a colon, junk around the token.
    const token = Buffer.from('admin:s3cret').toString('base64');
    for (const authorization of [
      `Basic ${Buffer.from('admin:nope').toString('base64')}`,
      `Basic ${Buffer.from('admins3cret').toString('base64')}`,
      `xBasic ${token}`,
      `Basic ${token}!`,
    ])
      expect((await rawGet(broken, { authorization })).status, authorization).toBe(401);
    expect((await rawGet(broken, { authorization: `Basic ${Buffer.from('admin:nope').toString('base64')}` })).body).toMatch(
      /^401 - Unauthorized: expected .*, received user "admin" with a password that does not match$/,
    );
    expect((await rawGet(broken)).body).toMatch(/^401 - Unauthorized: expected .*, received no Authorization header$/);
    expect((await rawGet(broken, { authorization: `basic   ${token}` })).status).toBe(400);
    expect(asked.headers, 'the protective headers').toMatchObject({
      'x-frame-options': 'SAMEORIGIN',
      'referrer-policy': 'same-origin',
      'x-content-type-options': 'nosniff',
    });
    expect(asked.headers['content-security-policy']).toContain("frame-ancestors 'self'");
    const long = await rawGet(`${w.base}/q/test/${'x'.repeat(1100)}.json`, auth);
    expect(long.status).toBe(414);
    expect(JSON.parse(long.body)[1]).toMatch(/^URL: expected each part of its path at most 1000 characters, received "\/therq\/q\/test\/x{60}/);
  });

  it('serves everything under the root, links and redirects carry it, outside is a plain 404', async () => {
    const outside = await fetch(`${w.origin}/q.txt`, { headers: auth });
    expect(outside.status).toBe(404);
    expect(await outside.text()).toBe('Not Found: /q.txt');
    // A .json URL is a JSON client: the same text as ["fail", text].
    const json = await fetch(`${w.origin}/q.json`, { headers: auth });
    expect([json.status, await json.json()]).toEqual([404, ['fail', 'Not Found: /q.json']]);
    expect((await fetch(`${w.origin}//therq//q.json`, { headers: auth })).status).toBe(200);
    const dash = await (await fetch(`${w.base}/`, { headers: auth })).text();
    expect(dash).toContain('href="/therq/q/test"');
    expect(dash).toContain('href="/therq/css/rq.css"');
    expect((await fetch(`${w.base}`, { headers: auth })).status).toBe(200);

    const res = await fetch(`${w.base}/q/test/new_message`, {
      method: 'POST',
      headers: auth,
      body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done' }) }),
    });
    const [ok, full] = (await res.json()) as string[];
    expect(ok).toBe('ok');
    expect(full).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${w.port}/therq/q/test/\\d{8}\\.`));
    const id = full.split('/').pop()!;
    await waitState(w.base, 'test', id, ['done'], { headers: auth });
    const clone = await postForm(`${w.base}/q/test/${id}/clone`, {}, auth);
    expect(clone.status).toBe(303);
    expect(clone.headers.get('location')).toBe(`${w.origin}/therq/q/test`);
    expect(clone.headers.get('set-cookie')).toMatch(/Path=\/therq\//);
    const next = await (await fetch(clone.headers.get('location')!, { headers: { ...auth, cookie: cookiesOf(clone) } })).text();
    expect(next).toContain('Message cloned successfully');
    const msgPage = await (await fetch(`${w.base}/q/test/${id}`, { headers: auth })).text();
    expect(msgPage).toContain(`src="/therq/q/test/${id}/tailviewlog/stdio.log?embed=1"`);
    // new_queue is off by default.
    const nq = await fetch(`${w.base}/new_queue`, { headers: auth });
    expect(nq.status).toBe(403);
    expect(await nq.text()).toBe('Queue creation not allowed at this time.');
  });
});

describe('path traversal and odd names', () => {
  let w: WebRoot;
  let done: string;
  let prep: string;
  beforeAll(async () => {
    w = await startWebRoot({ config: { allow_new_queue: true } });
    done = await send(w.base, 'test', { param1: 'done' });
    await waitState(w.base, 'test', done, ['done']);
    const r = await fetch(`${w.base}/q/test/new_message`, {
      method: 'POST',
      body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', _method: 'prep' }) }),
    });
    prep = ((await r.json()) as string[])[1].split('/').pop()!;
    const fd = new FormData();
    fd.set('x_format', 'json');
    fd.set('filedata', new Blob(['hello']), 'a.txt');
    await fetch(`${w.base}/q/test/${prep}/attach/new`, { method: 'POST', body: fd });
    // A secret next to the queues that no URL may reach.
    await fs.writeFile(path.join(w.root, 'config', 'secret.txt'), 'TOP SECRET');
  }, 60_000);
  afterAll(async () => {
    await w?.stop();
  });

  const badQueues = [
    '..',
    '%2e%2e',
    '.',
    '..%2F..%2Fconfig',
    '%2Fetc',
    'te%00st',
    'te%0Ast',
    'test%2F..',
    'test%2F..%2F..',
    '%FF%FE',
    'a%20b',
    'config%2Fsecret.txt',
  ];
  const badIds = () => ['..', '%2e%2e', '%2e%2e%2f%2e%2e%2fconfig', `${done}%2F..`, `..%2F${done}`, '%2Fetc%2Fpasswd', '20200101.0000.00.000.1%00', '%FF'];
  const badFiles = [
    '..',
    '%2e%2e',
    '..%2F..%2F..%2F..%2Fconfig%2Fsecret.txt',
    '%2e%2e%2fmsg',
    '..%2Fmsg',
    '%2Fetc%2Fpasswd',
    '.hidden',
    'a%00b',
    'a%0Ab',
    '%5C..%5Cmsg',
    '%FF',
  ];

  it('GET routes answer 4xx and never serve a file outside the message', async () => {
    const paths: string[] = [];
    for (const q of badQueues) {
      paths.push(
        `/q/${q}`,
        `/q/${q}.json`,
        `/q/${q}.txt`,
        `/q/${q}/config.json`,
        `/q/${q}/config`,
        `/q/${q}/done.json`,
        `/q/${q}/new_message`,
        `/q/${q}/${done}`,
        `/q/${q}/${done}/log/stdio.log`,
      );
    }
    for (const id of badIds())
      paths.push(
        `/q/test/${id}`,
        `/q/test/${id}.json`,
        `/q/test/${id}/state.json`,
        `/q/test/${id}/log/stdio.log`,
        `/q/test/${id}/attach/a.txt`,
        `/q/test/${id}/log/stdio.log/events`,
      );
    for (const f of badFiles) {
      paths.push(
        `/q/test/${done}/log/${f}`,
        `/q/test/${prep}/attach/${f}`,
        `/q/test/${done}/tailviewlog/${f}`,
        `/q/test/${prep}/tailview/${f}`,
        `/q/test/${done}/log/${f}/events`,
      );
    }
    for (const p of paths) {
      const res = await rawRequest(w.port, 'GET', p, {}, undefined);
      expect(res.status, p).toBeGreaterThanOrEqual(400);
      expect(res.status, p).toBeLessThan(500);
      expect(res.body, p).not.toContain('TOP SECRET');
      expect(res.body, p).not.toContain('root:x:0');
    }
  });

  it('POST routes answer 4xx and change nothing on disk', async () => {
    const before = await treeSnapshot(w.root);
    const posts: [string, string][] = [];
    for (const q of badQueues) {
      posts.push(
        [`/q/${q}/new_message`, `mesg=${encodeURIComponent(JSON.stringify({ dest: 'test' }))}`],
        [`/q/${q}/adminoper`, 'down=1'],
        [`/q/${q}/restart`, ''],
        [`/q/${q}/ack_errs`, ''],
        [`/q/${q}/${done}`, '_method=delete'],
        [`/q/${q}/${prep}/attach/a.txt`, '_method=delete'],
      );
    }
    for (const id of badIds()) {
      posts.push(
        [`/q/test/${id}`, '_method=delete'],
        [`/q/test/${id}`, '_method=commit'],
        [`/q/test/${id}/clone`, ''],
        [`/q/test/${id}/run_now`, ''],
        [`/q/test/${id}/attach/a.txt`, '_method=delete'],
      );
    }
    for (const f of badFiles) posts.push([`/q/test/${prep}/attach/${f}`, '_method=delete&x_format=json']);
    for (const [p, body] of posts) {
      const res = await rawRequest(w.port, 'POST', p, { 'content-type': 'application/x-www-form-urlencoded' }, body);
      expect(res.status, p).toBeGreaterThanOrEqual(400);
      expect(res.status, p).toBeLessThan(500);
    }
    // Names in the body rather than the path go to rq-mgr, which refuses them.
    for (const name of ['..', '../test', '/etc', 'test/..', '']) {
      const res = await postForm(`${w.base}/delete_queue`, { queue_name: name });
      expect([303, 400], name).toContain(res.status);
    }
    const nq = await postForm(`${w.base}/new_queue`, { 'queue[name]': '../escape', 'queue[script]': '/bin/true' });
    expect(nq.status).toBe(403);
    expect(await treeSnapshot(w.root)).toEqual(before);
    expect(await (await fetch(`${w.base}/q/test/${done}/state.json`)).json()).toEqual(['done']);
  });

  it('an attachment name from the upload is refused with 400 when it has path parts or odd characters', async () => {
    const upload = async (name: string) => {
      const fd = new FormData();
      fd.set('x_format', 'json');
      fd.set('filedata', new Blob(['evil']), name);
      const res = await fetch(`${w.base}/q/test/${prep}/attach/new`, { method: 'POST', body: fd });
      return { status: res.status, reply: (await res.json()) as unknown[] };
    };
    const before = await treeSnapshot(w.root);
    // File names with path parts are refused as they are (400), never cut to their last part.
    for (const name of ['..', '.x', 'a<b', 'a|b', 'a%b', 'a$b', '../../../config/evil.txt', 'sub/evil.txt', 'C:\\evil.txt']) {
      const r = await upload(name);
      expect(r.status, name).toBe(400);
      expect(r.reply[0], name).toBe('fail');
    }
    expect(await treeSnapshot(w.root)).toEqual(before);
    const msg = (await (await fetch(`${w.base}/q/test/${prep}.json`)).json()) as { _attachments: Record<string, { path: string }> };
    expect(Object.keys(msg._attachments)).toEqual(['a.txt']);
  });

  it('does not follow a symlink planted in a job directory', async () => {
    const msg = (await (await fetch(`${w.base}/q/test/${done}.json`)).json()) as { path: string };
    const job = path.join(w.root, msg.path, 'job');
    await fs.symlink(path.join(w.root, 'config', 'secret.txt'), path.join(job, 'evil.log'));
    const res = await fetch(`${w.base}/q/test/${done}/log/evil.log`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('TOP SECRET');
    expect((await fetch(`${w.base}/q/test/${done}/log/stdio.log`)).status).toBe(200);
  });

  it('queue names that are valid but unknown are 404, and queues/ entries that are not queues are unreachable', async () => {
    await fs.mkdir(path.join(queuePaths(w.root, 'test').dir, '..', '.trash'), { recursive: true });
    for (const p of ['/q/.trash', '/q/.uploads', '/q/nope', '/q/nope/config.json'])
      expect((await rawRequest(w.port, 'GET', p, {}, undefined)).status, p).toBe(404);
  });
});
