// The rq root a built-in script works on: RQ_ROOT (rq-mgr exports it), else derived from the message's job dir.
import path from 'node:path';
import { RqError } from '../errors.js';

/** RQ_MSG_DIR is <root>/queues/<q>/run/<id>/job, so the root is five levels up when RQ_ROOT is unset. */
export function scriptRoot(env: NodeJS.ProcessEnv): string {
  if (env.RQ_ROOT) return path.resolve(env.RQ_ROOT);
  const jobDir = env.RQ_MSG_DIR;
  if (jobDir && path.basename(path.resolve(jobDir, '..', '..', '..', '..')) === 'queues') return path.resolve(jobDir, '..', '..', '..', '..', '..');
  throw RqError.of(
    'RQ_ERR_CONFIG',
    `cannot tell the rq root: RQ_ROOT is unset and RQ_MSG_DIR (${jobDir ?? 'unset'}) is not <root>/queues/<queue>/run/<id>/job`,
  );
}
