// Resolves the root directory every rq program works on: --root, else RQ_ROOT, else the checkout.
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The package's own directory (parent of src/ or dist/). */
export const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** An empty RQ_ROOT (`RQ_ROOT= rq queues`) is no root given, as shells and most tools read an empty variable: not the current directory. */
export function resolveRoot(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = flag ?? (env.RQ_ROOT || PACKAGE_DIR);
  return path.resolve(chosen);
}
