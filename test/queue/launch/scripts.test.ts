// Script runner: environment, fds, exec_prefix, symlinked scripts, SCRIPTERROR, dup replies.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueProc, VERBS_PY, VERBS_SH, waitFor } from '../../helpers/rq-root.js';
import { perTestRoot } from '../../helpers/per-test-root.js';

const root = perTestRoot({ relativeRoot: '/therq' });
const { start } = root;
async function logOf(q: QueueProc, id: string) {
  const m = await q.waitState(id, ['done', 'err']);
  return { m, log: await fs.readFile(path.join(root.t.root, m.path, 'job', 'stdio.log'), 'utf8') };
}

describe('environment (spec §4.4)', () => {
  it.each([VERBS_SH, VERBS_PY])('gives %s the RQ_* variables, env_vars without RQ_ keys, fds 3/4', async (script) => {
    const q = await start('envq', { script, env_vars: { RQTESTENV1: 'OWEN', RQTESTENV2: '32', RQ_VER: 'hijack' } });
    const id = await q.send({ param1: 'env', param2: 'p2', orig_msg_id: 'orig-1', force_remote: 1 });
    const { m, log } = await logOf(q, id);
    expect(m.state).toBe('done');
    const env = Object.fromEntries(
      log
        .split('\n')
        .filter((l) => /^[A-Z_0-9]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    const full = `http://127.0.0.1:${root.t.port}/therq/q/envq/${id}`;
    expect(env).toMatchObject({
      RQ_VER: '3.0.0',
      RQ_SCRIPT: script,
      RQ_REALSCRIPT: script,
      RQ_HOST: `http://127.0.0.1:${root.t.port}/therq/`,
      RQ_PORT: String(root.t.port),
      RQ_DEST: `http://127.0.0.1:${root.t.port}/therq/q/envq/`,
      RQ_DEST_QUEUE: 'envq',
      RQ_MSG_ID: id,
      RQ_FULL_MSG_ID: full,
      RQ_PIPE: '3',
      RQ_WRITE: '3',
      RQ_READ: '4',
      RQ_COUNT: '0',
      RQ_PARAM1: 'env',
      RQ_PARAM2: 'p2',
      RQ_PARAM3: '',
      RQ_PARAM4: '',
      RQ_ORIG_MSG_ID: 'orig-1',
      RQ_FORCE_REMOTE: '1',
      RQTESTENV1: 'OWEN',
      RQTESTENV2: '32',
    });
    expect(env.RQ_MSG_DIR).toBe(path.join(root.t.root, 'queues', 'envq', 'run', id, 'job'));
  });

  it.each([
    ['the native spawner', {}, 'native spawner'],
    ['the child_process fallback (RQ_SPAWN=node)', { RQ_SPAWN: 'node' }, 'child_process'],
  ])('with %s: header first, nice 19, own process group, cwd job/, stdin at EOF', async (_, env, launcher) => {
    const dir = path.join(root.t.root, 'probe');
    await fs.mkdir(dir);
    const script = path.join(dir, 'run');
    await fs.writeFile(
      script,
      '#!/bin/bash\necho "nice=$(nice) pgid=$(ps -o pgid= $$ | tr -d \' \') pid=$$ cwd=$PWD"\nif read -r line; then echo "stdin=data"; else echo "stdin=eof"; fi\necho "done ok" >&3\n',
      { mode: 0o755 },
    );
    const q = await start('probe', { script, exec_prefix: '' }, env);
    const id = await q.send({});
    const { log } = await logOf(q, id);
    const m = /nice=(\d+) pgid=(\d+) pid=(\d+) cwd=(\S+)/.exec(log)!;
    expect(m[1]).toBe('19');
    expect(m[2]).toBe(m[3]);
    expect(m[4]).toMatch(new RegExp(`/run/${id.replace(/\./g, '\\.')}/job$`));
    expect(log).toContain('stdin=eof');
    expect(log.startsWith(`\n${m[3]} - `)).toBe(true);
    expect(log.split('\n')[1]).toMatch(new RegExp(`^${m[3]} - .+ - RQ START - ${script}$`));
    const qlog = await fs.readFile(path.join(root.t.root, 'log', 'queue-probe.log'), 'utf8');
    expect(qlog).toContain(`scripts start through the ${launcher}`);
  });
});

describe('exec_prefix', () => {
  it('empty prefix runs the script directly with no arguments; default prefix runs it under bash -lc', async () => {
    // Only a login shell reads ~/.bash_profile, and only `bash -c` sets BASH_EXECUTION_STRING:
    // the profile records the command string, so the script's environment shows how it was started.
    const home = path.join(root.t.root, 'home');
    await fs.mkdir(home);
    await fs.writeFile(path.join(home, '.bash_profile'), 'export PROFILE_SAW="login -c $BASH_EXECUTION_STRING"\n');
    const envVars = { HOME: home };
    const direct = await start('direct', { exec_prefix: '', env_vars: envVars });
    const a = await logOf(direct, await direct.send({ param1: 'args' }));
    expect(a.log).toContain('argc=0');
    const d = await logOf(direct, await direct.send({ param1: 'env' }));
    expect(d.log).toContain(`HOME=${home}\n`);
    expect(d.log).not.toContain('PROFILE_SAW=');
    const viaBash = await start('viabash', { exec_prefix: null, env_vars: envVars });
    const b = await logOf(viaBash, await viaBash.send({ param1: 'env' }));
    expect(b.m.state).toBe('done');
    expect(b.log).toContain(`PROFILE_SAW=login -c ${VERBS_SH}\n`);
  });
});

describe('script resolution', () => {
  it('runs a symlinked script by its real path', async () => {
    const link = path.join(root.t.root, 'current-run');
    await fs.symlink(VERBS_SH, link);
    const q = await start('linked', { script: link });
    const { log } = await logOf(q, await q.send({ param1: 'env' }));
    expect(log).toContain(`RQ_REALSCRIPT=${VERBS_SH}`);
    expect(log).toContain(`RQ_SCRIPT=${link}`);
    expect(log).toContain(`RQ START - ${VERBS_SH}`);
  });

  it('SCRIPTERROR when the script is not executable, cleared as soon as it is fixed', async () => {
    const script = path.join(root.t.root, 'fixme.sh');
    await fs.writeFile(script, '#!/bin/bash\necho "done fixed" >&3\n', { mode: 0o644 });
    const q = await start('fixme', { script });
    const id = await q.send({});
    await waitFor(async () => (await q.cmd('status'))[0] === 'SCRIPTERROR', 'the queue to report SCRIPTERROR');
    expect(await q.state(id)).toBe('que');
    expect((await q.cmd('num_messages')).run).toBe(0);
    await fs.chmod(script, 0o755);
    // No request needed: the watch on the script's directory notices the chmod.
    const m = await q.waitState(id, ['done'], 5000);
    expect(m.status).toBe('done - fixed');
    expect(await q.cmd('status')).toEqual(['UP']);
  });
});

describe('dup (spec §4.6)', () => {
  it.each([VERBS_SH, VERBS_PY])('%s: dup to a local queue, to a missing queue, to itself, with attachments', async (script) => {
    const src = await start('src', { script, num_workers: 2 });
    const dst = await start('dst', { script });
    await fs.writeFile(path.join(root.t.root, 'config', 'dst.pause'), '');

    const ok = await src.waitState(await src.send({ param1: 'dup', param2: 'dst', param3: '60' }), ['done', 'err']);
    expect(ok.status).toMatch(new RegExp(`^done - ok http://127\\.0\\.0\\.1:${root.t.port}/therq/q/dst/\\d{8}\\.`));
    const copyId = ok.status.split('/').pop();
    const copy = (await dst.cmd('get_message', { msg_id: copyId }))[1];
    expect(copy).toMatchObject({ dest: 'dst', count: 0, param1: 'dup', param2: 'dst', orig_msg_id: ok.orig_msg_id, state: 'que' });
    expect(copy.due).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 50);

    const missing = await src.waitState(await src.send({ param1: 'dup', param2: 'nosuchqueue' }), ['done', 'err']);
    expect(missing.status).toBe("err - fail couldn't connect to queue - nosuchqueue");

    await fs.writeFile(path.join(root.t.root, 'config', 'dst.down'), '');
    const down = await src.waitState(await src.send({ param1: 'dup', param2: 'dst' }), ['done', 'err']);
    expect(down.status).toBe('err - fail dup failed - status: DOWN');
    const file = path.join(root.t.root, 'blob.bin');
    await fs.writeFile(file, Buffer.alloc(4096, 7));
    const sendAttached = async () => {
      const prep = await src.cmd('prep_message', { dest: 'src', param1: 'dup', param2: 'dst' });
      const pid = prep[1].split('/').pop();
      await src.cmd('attach_message', { msg_id: pid, pathname: file });
      await src.cmd('commit_message', { msg_id: pid });
      return pid;
    };
    // With attachments the copy is made in steps (prep, attach, commit): the reply says which one failed.
    const downAttached = await src.waitState(await sendAttached(), ['done', 'err']);
    expect(downAttached.status).toBe('err - fail dup failed - prep fail status: DOWN');
    await fs.rm(path.join(root.t.root, 'config', 'dst.down'));

    const pid = await sendAttached();
    const withAttach = await src.waitState(pid, ['done', 'err']);
    expect(withAttach.state).toBe('done');
    const acopy = (await dst.cmd('get_message', { msg_id: withAttach.status.split('/').pop() }))[1];
    expect(Object.keys(acopy._attachments)).toEqual(['blob.bin']);
    const [a, b] = await Promise.all([fs.stat(acopy._attachments['blob.bin'].path), fs.stat(path.join(root.t.root, withAttach.path, 'attach', 'blob.bin'))]);
    expect(a.ino).toBe(b.ino);

    const self = await src.waitState(await src.send({ param1: 'dup', param2: 'src', param3: '3600' }), ['done', 'err']);
    expect(self.status).toMatch(/^done - ok http:.*\/q\/src\//);
  });

  it('a dup to a local queue whose name starts with http goes to that queue, not to the relay', async () => {
    const src = await start('src', { script: VERBS_SH });
    await start('httpd');
    const m = await src.waitState(await src.send({ param1: 'dup', param2: 'httpd' }), ['done', 'err']);
    expect(m.status).toMatch(new RegExp(`^done - ok http://127\\.0\\.0\\.1:${root.t.port}/therq/q/httpd/\\d{8}\\.`));
  });

  it('a script that leaves without reading the reply does not hurt the queue', async () => {
    const q = await start('leaver');
    await start('target');
    const m = await q.waitState(await q.send({ param1: 'dup_and_leave', param2: 'target' }), ['done', 'err']);
    expect(m.state).toBe('done');
    expect(await q.cmd('ping')).toEqual(['pong']);
  });
});
