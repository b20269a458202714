// Where `npm run build-native` (node-gyp) puts rq's native addons, found from wherever this code runs (src/, dist/, a bundle).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's root: the nearest folder above `from` with a package.json. */
function projectRoot(from: string): string {
  const up = path.dirname(from);
  return fs.existsSync(path.join(from, 'package.json')) || up === from ? from : projectRoot(up);
}

/** The path of addon `name` (`rq_spawn`, `rq_xattr`). */
export function addonPath(name: string): string {
  return path.join(projectRoot(path.dirname(fileURLToPath(import.meta.url))), 'build', 'Release', `${name}.node`);
}
