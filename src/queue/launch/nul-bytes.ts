// What no launcher can pass to a script: a NUL byte ends a C string, so an argument, an environment value or a path holding one would be cut short.
import type { LaunchRequest } from './script-runner.js';

/** The refusal both launchers give before starting anything, in the same words. */
export const NUL_REFUSAL = 'an argument or environment value contains a NUL byte';

/** True when an argument, an environment entry or the cwd of `r` holds a NUL byte. */
export function holdsNul(r: Pick<LaunchRequest, 'argv' | 'env' | 'cwd'>): boolean {
  if (r.cwd.includes('\0') || r.argv.some((a) => a.includes('\0'))) return true;
  return r.env.holdsNul();
}
