// The environment a script starts with (scriptEnv): the queue's own, less what must not leak into scripts, plus RQ_*, the run's policy and the queue's env_vars.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScriptEnv, scriptEnv } from '../../../src/queue/launch/script-env.js';
import type { Message } from '../../../src/message/message.js';

const msg = { msg_id: '20261203.1500.00.000.7', dest: 'q', count: 2, param1: 'p1', orig_msg_id: 'http://h:3333/q/q/20261203.1500.00.000.7' } as Message;
const run = (baseEnv: NodeJS.ProcessEnv, envVars: Record<string, string> = {}, m: Message = msg, runEnv?: Record<string, string>) =>
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
    ...(runEnv ? { runEnv } : {}),
  });
const ctx = (...a: Parameters<typeof run>) => run(...a).object();
/** The environment execve gets, joined as the native spawner joins its two parts (rq-spawn-strings.c). */
const envp = (env: ScriptEnv) => {
  const { shared, own } = env.parts();
  return shared ? shared.entries.concat(own) : own;
};

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

  it('gives the fds of the line protocol, empty text for a param set to null, and no policy variable in place of one of rq’s own', () => {
    const env = run({}, {}, { ...msg, param2: null, param3: 0 } as unknown as Message, { RQ_ATTEMPT: '2', RQ_MSG_ID: 'policy', RQ_PIPE: '9' }).object();
    expect(env).toMatchObject({ RQ_PIPE: '3', RQ_WRITE: '3', RQ_READ: '4', RQ_PARAM2: '', RQ_PARAM3: '0', RQ_MSG_ID: msg.msg_id, RQ_ATTEMPT: '2' });
  });

  it('sets RQ_FORCE_REMOTE only for a message that asks for it', () => {
    expect(ctx({}, {}, { ...msg, force_remote: 1 } as Message).RQ_FORCE_REMOTE).toBe('1');
  });

  it("the run's own variables replace the daemon's stale ones, and the queue's env_vars win over the run's PWD and trace", () => {
    const base = { PATH: '/bin', RQ_ATTEMPT: '9', TRACEPARENT: 'stale' };
    const env = run(base, { PWD: '/mine', TRACEPARENT: 'queue' }, msg, { RQ_ATTEMPT: '2', TRACEPARENT: 'run' });
    expect(env.object()).toMatchObject({ PATH: '/bin', RQ_ATTEMPT: '2', TRACEPARENT: 'queue', PWD: '/mine' });
    expect(
      envp(env)
        .filter((e) => /^(RQ_ATTEMPT|TRACEPARENT|PWD)=/.test(e))
        .sort(),
    ).toEqual(['PWD=/mine', 'RQ_ATTEMPT=2', 'TRACEPARENT=queue']);
    expect(env.get('PWD')).toBe('/mine');
    expect(run({ PATH: '/bin' }).get('PWD')).toBe('/spool/job');
  });

  it("hands the shared part to the spawner as made once, unless a run's own variable replaces one of it", () => {
    const env = run({ PATH: '/bin' });
    expect(env.parts().shared).toBe(env.shared);
    expect(env.parts().own).toContain('RQ_MSG_ID=' + msg.msg_id);
    const replacing = run({ PATH: '/bin', RQ_ATTEMPT: 'stale' }, {}, msg, { RQ_ATTEMPT: '2' });
    expect(replacing.parts().shared).toBeNull();
    expect(replacing.parts().own.filter((e) => e.startsWith('RQ_ATTEMPT='))).toEqual(['RQ_ATTEMPT=2']);
    expect(replacing.parts().own).toContain('PATH=/bin');
  });

  it('flattens the shared part once per daemon environment and env_vars object, anew for new env_vars', () => {
    const base = { PATH: '/bin' };
    const vars = { TZ: 'UTC' };
    expect(run(base, vars).shared).toBe(run(base, vars).shared);
    expect(run(base, { TZ: 'UTC' }).shared).not.toBe(run(base, vars).shared);
    expect(run(base, { TZ: 'Asia/Tokyo' }).object().TZ).toBe('Asia/Tokyo');
  });

  it('finds a NUL byte in a shared name or value and in a run’s own value', () => {
    expect(run({ PATH: '/bin' }).holdsNul()).toBe(false);
    expect(run({ PATH: '/b\0in' }).holdsNul()).toBe(true);
    expect(run({ ['A\0B']: '1' }).holdsNul()).toBe(true);
    expect(run({ PATH: '/bin' }, {}, { ...msg, param2: 'x\0y' } as Message).holdsNul()).toBe(true);
    expect(ScriptEnv.of({ PATH: '/bin' }).holdsNul()).toBe(false);
  });

  it('the environment execve gets is exactly the object, one entry a name, whatever the daemon, the queue and the run set', () => {
    // Names drawn from a small set, so that the three sources collide often.
    const name = fc.constantFrom('PATH', 'PWD', 'RUBYOPT', 'RQ_MSG_ID', 'RQ_ATTEMPT', 'RQ_FORCE_REMOTE', 'TRACEPARENT', 'TZ', 'X');
    const vars = fc.dictionary(name, fc.string({ maxLength: 4 }));
    // A run's policy sets RQ_* names and the trace's (run-policy.ts).
    const policy = fc.dictionary(fc.constantFrom('RQ_ATTEMPT', 'RQ_TIMEOUT', 'TRACEPARENT'), fc.string({ maxLength: 4 }));
    fc.assert(
      fc.property(vars, vars, policy, fc.boolean(), (base, envVars, runEnv, force) => {
        const env = run(base, envVars, { ...msg, ...(force ? { force_remote: 1 } : {}) } as Message, runEnv);
        const entries = envp(env);
        const object = env.object();
        expect(new Set(entries.map((e) => e.slice(0, e.indexOf('=')))).size).toBe(entries.length);
        expect([...entries].sort()).toEqual(
          Object.entries(object)
            .map(([k, v]) => `${k}=${v}`)
            .sort(),
        );
        for (const k of Object.keys(object)) expect(env.get(k)).toBe(object[k]);
        expect(object.RUBYOPT).toBe(envVars.RUBYOPT);
        expect(object.RQ_MSG_ID).toBe(msg.msg_id);
        expect(object.RQ_FORCE_REMOTE).toBe(force ? '1' : undefined);
        for (const [k, v] of Object.entries(envVars)) if (!k.startsWith('RQ_')) expect(object[k]).toBe(v);
        for (const [k, v] of Object.entries(runEnv)) if (!(k in envVars)) expect(object[k]).toBe(v);
        for (const [k, v] of Object.entries(base))
          if (!(k in envVars) && !(k in runEnv) && !/^(RUBYOPT|PWD|RQ_MSG_ID|RQ_FORCE_REMOTE)$/.test(k)) expect(object[k]).toBe(v);
      }),
    );
  });
});
