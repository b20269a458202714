// rq-init: rq-mgr in the foreground, logging to stdout, for systemd, runit, s6 and containers (spec §6.1); its own help, then rq-mgr run.
import { main as mgrMain } from './rq-mgr.js';

export function main(argv: string[]): Promise<number> {
  return mgrMain(['run', ...argv], 'rq-init');
}
