// The rq_router queue's script (scripts/rq_router/run): routes one message by config/rq_router_rules.rb, using dup.
import fs from 'node:fs';
import path from 'node:path';
import { RqError } from '../errors.js';
import { matchRule, selectHosts, txformHost } from './router-route.js';
import { parseRules } from './router-rules.js';
import { scriptLog } from '../script-kit/log.js';
import { ScriptPipe, pipeFds } from '../script-kit/pipe.js';
import { scriptRoot } from '../script-kit/root.js';

export const RULES_FILE = 'rq_router_rules.rb';

/** A routing decision that hangs (a dup the queue never answers) must not hold the router forever. */
const ALARM_S = 60;

function main(env: NodeJS.ProcessEnv): Promise<number> | number {
  const pipe = new ScriptPipe(pipeFds(env));
  const log = scriptLog();
  const root = scriptRoot(env);
  const rulesFile = path.join(root, 'config', RULES_FILE);

  let text: string;
  try {
    text = fs.readFileSync(rulesFile, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no rules file' : (err as Error).message;
    pipe.send('err', `Cannot read rule file at: ${rulesFile} (${why})`);
    return 0;
  }
  let rules;
  try {
    rules = parseRules(text, rulesFile).rules;
  } catch (err) {
    if (!(err instanceof RqError)) throw err;
    // Fail closed: the router queue goes DOWN with the reason until the file is fixed and the queue brought up.
    const downFile = path.join(root, 'config', 'rq_router.down');
    fs.writeFileSync(downFile, `bad rules file: ${err.message}\n`);
    log(`bad rules file, router queue taken down (${downFile}): ${err.message}`);
    pipe.send('err', `Bad rule file at: ${rulesFile}`);
    return 1;
  }

  const jobDir = env.RQ_MSG_DIR ?? process.cwd();
  const msg = JSON.parse(fs.readFileSync(path.join(jobDir, '..', 'msg'), 'utf8')) as Record<string, unknown>;
  const rule = matchRule(rules, msg);
  setTimeout(
    () => {
      log(`routing took longer than ${ALARM_S + rule.delay} s: giving up`);
      process.exit(2);
    },
    (ALARM_S + rule.delay) * 1000,
  ).unref();

  if (rule.log) {
    const line = `${process.pid} - ${new Date().toISOString()} - ${rule.desc} - ${rule.action} - ${env.RQ_MSG_ID ?? msg.msg_id} - ${msg.src ?? ''}\n`;
    try {
      fs.appendFileSync(path.join(root, 'log', 'rq_router.log'), line);
    } catch (err) {
      log(`cannot write log/rq_router.log: ${(err as Error).message}`);
    }
  }
  log(`rule ${JSON.stringify(rule.desc)} (line ${rule.line || 'built-in'}) matched: action ${rule.action}`);

  const act = (): number => {
    const dest = String(msg.dest ?? '');
    switch (rule.action) {
      case 'done':
        pipe.send('done', 'router processed a done');
        return 0;
      case 'err':
        pipe.send('err', 'router processed an err');
        return 1;
      case 'balance': {
        const to = txformHost(dest, selectHosts(rule)[0]);
        const d = pipe.dup(to);
        log(`balance to ${to}: ${d.reply}`);
        if (d.ok) pipe.send('done', `DUP to ${d.id}`);
        else pipe.send('err', `DUP failed - ${d.reply}`);
        return 0;
      }
      case 'relay': {
        const targets = selectHosts(rule).map((h) => txformHost(dest, h));
        for (const to of targets) {
          const d = pipe.dup(to);
          log(`relay to ${to}: ${d.reply}`);
          if (!d.ok) {
            pipe.send('err', `DUP relay failed - ${d.reply}`);
            return 0;
          }
          pipe.send('run', `DUP relay to ${d.id}`);
        }
        pipe.send('done', `done relay of ${targets.length} messages`);
        return 0;
      }
    }
  };

  if (rule.delay > 0) {
    pipe.send('run', `router delay ${rule.delay} seconds`);
    return new Promise((resolve) => setTimeout(() => resolve(act()), rule.delay * 1000));
  }
  return act();
}

Promise.resolve()
  .then(() => main(process.env))
  .then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`rq_router: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
