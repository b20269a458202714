// `npm start`: installs a default root in the checkout on first run, then runs rq-mgr in the foreground.
import fs from 'node:fs';
import { rootPaths } from '../config/paths.js';
import { resolveRoot } from '../config/root.js';
import { main as install } from './rq-install.js';
import { parseArgs } from '../args.js';

export async function main(argv: string[]): Promise<number> {
  const { opts } = parseArgs(['start', ...argv]);
  const root = resolveRoot(typeof opts.root === 'string' ? opts.root : undefined);
  if (!fs.existsSync(rootPaths(root).configFile)) {
    const code = await install(['--root', root]);
    if (code !== 0) return code;
  }
  const config = JSON.parse(fs.readFileSync(rootPaths(root).configFile, 'utf8')) as { addr?: string; port?: string | number };
  process.stderr.write(`rq: root ${root}; web UI http://${config.addr ?? '127.0.0.1'}:${config.port ?? 3333}/ ; Ctrl-C stops\n`);
  const { runMgr } = await import('../mgr/mgr-main.js');
  return runMgr({ root });
}
