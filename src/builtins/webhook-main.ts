// The webhook queue's script (scripts/webhook/run): one POST of a finished message to its post_run_webhook URL.
import { HttpClient, HttpTransportError } from '../script-kit/http-client.js';
import { backoffScale, resendDelay, resendText } from '../script-kit/resend-delay.js';
import { scriptLog } from '../script-kit/log.js';
import { ScriptPipe, pipeFds } from '../script-kit/pipe.js';
import { webhookRequest } from './webhook-request.js';

/** Classic webhook back-off: count² × 60 s, capped, until the queue's max_count. */
const WEBHOOK_BACKOFF_UNIT_S = 60;

async function main(env: NodeJS.ProcessEnv): Promise<number> {
  const pipe = new ScriptPipe(pipeFds(env));
  const log = scriptLog();
  const count = Number(env.RQ_COUNT ?? '0') || 0;
  const url = env.RQ_PARAM1 ?? '';
  let req;
  try {
    req = webhookRequest(url, env.RQ_PARAM2 ?? '');
  } catch (err) {
    log(`cannot post: ${(err as Error).message}`);
    pipe.send('err', (err as Error).message);
    return 0;
  }
  pipe.send('run', `Attempting post to url: ${url}`);
  const http = new HttpClient({ idleTimeoutMs: 60_000 });
  let problem: string;
  try {
    const reply = await http.request(url, { method: 'POST', headers: { 'content-type': req.contentType, accept: 'application/json, */*' }, body: req.body });
    log(`POST ${url} (${req.kind === 'rq' ? 'rq new_message' : 'message JSON'}): HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
    if (reply.status >= 200 && reply.status < 300) {
      pipe.send('done', `successfull post ${reply.status}`);
      return 0;
    }
    problem = `post to ${url} got HTTP ${reply.status}`;
  } catch (err) {
    problem = err instanceof HttpTransportError ? `post failed: ${err.message}` : `post failed: ${(err as Error).message}`;
    log(problem);
  } finally {
    http.close();
  }
  const delay = resendDelay(count, WEBHOOK_BACKOFF_UNIT_S, backoffScale(env));
  pipe.send('resend', resendText(delay, problem));
  return 0;
}

main(process.env).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`webhook: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
