// The environment a script starts with (scriptEnv): the queue's own, less what must not leak into scripts, plus RQ_* and the queue's env_vars.
import { describe, expect, it } from 'vitest';
import { scriptEnv } from '../../../src/queue/launch/script-runner.js';
import type { Message } from '../../../src/message/message.js';

const msg = { msg_id: '20261203.1500.00.000.7', dest: 'q', count: 2, param1: 'p1', orig_msg_id: 'http://h:3333/q/q/20261203.1500.00.000.7' } as Message;
const ctx = (baseEnv: NodeJS.ProcessEnv, envVars: Record<string, string> = {}, m: Message = msg) =>
  scriptEnv({
    msg: m,
    fullId: 'full',
    queue: 'q',
    script: 'run',
    realScript: '/real/run',
    jobDir: '/spool/job',
    hostUrl: 'http://h:3333/',
    port: 3333,
    envVars,
    baseEnv,
  });

describe('scriptEnv', () => {
  it('keeps the queue process environment but RUBYOPT and a stale RQ_FORCE_REMOTE, and leaves the base object untouched', () => {
    const base = { PATH: '/bin', LANG: 'C.UTF-8', RUBYOPT: '-rbundler/setup', RQ_FORCE_REMOTE: '1', RQ_MSG_ID: 'stale', PWD: '/daemon' };
    const env = ctx(base);
    expect(env).toMatchObject({ PATH: '/bin', LANG: 'C.UTF-8', RQ_MSG_ID: msg.msg_id, RQ_COUNT: '2', RQ_PARAM1: 'p1', RQ_PARAM2: '', PWD: '/spool/job' });
    expect(env).not.toHaveProperty('RUBYOPT');
    expect(env).not.toHaveProperty('RQ_FORCE_REMOTE');
    expect(base).toEqual({ PATH: '/bin', LANG: 'C.UTF-8', RUBYOPT: '-rbundler/setup', RQ_FORCE_REMOTE: '1', RQ_MSG_ID: 'stale', PWD: '/daemon' });
  });

  it("the queue's env_vars win over the base, except RQ_* names, which stay rq's", () => {
    const env = ctx({ PATH: '/bin', TZ: 'UTC' }, { TZ: 'Europe/Paris', RQ_MSG_ID: 'mine', EXTRA: '1' });
    expect(env).toMatchObject({ PATH: '/bin', TZ: 'Europe/Paris', EXTRA: '1', RQ_MSG_ID: msg.msg_id });
  });

  it('RQ_DEST is a URL dest verbatim, its scheme in any case, and the URL of a queue whose name starts with http', () => {
    const env = (dest: string) => ctx({}, {}, { ...msg, dest } as Message);
    expect(env('HTTP://far:3333/q/work')).toMatchObject({ RQ_DEST: 'HTTP://far:3333/q/work', RQ_DEST_QUEUE: 'work' });
    expect(env('https://far/root/q/work/')).toMatchObject({ RQ_DEST: 'https://far/root/q/work/', RQ_DEST_QUEUE: 'work' });
    expect(env('httpd')).toMatchObject({ RQ_DEST: 'http://h:3333/q/httpd/', RQ_DEST_QUEUE: 'httpd' });
    expect(env('fleet:work')).toMatchObject({ RQ_DEST: 'fleet:work', RQ_DEST_QUEUE: 'work' });
  });

  it('sets RQ_FORCE_REMOTE only for a message that asks for it', () => {
    expect(ctx({}, {}, { ...msg, force_remote: 1 } as Message).RQ_FORCE_REMOTE).toBe('1');
  });
});
