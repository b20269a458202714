// Types of seeded-random.mjs for the TypeScript tests.
export interface SeededRandom {
  readonly seed: number;
  /** `replay with RQ_TEST_SEED=<seed>`, for assertion messages. */
  readonly replay: string;
  /** A number in [0, 1). */
  next(): number;
  /** A whole number in [0, n). */
  int(n: number): number;
  pick<T>(xs: readonly T[]): T;
}
export function mulberry32(seed: number): () => number;
export function parseSeed(text: string, label: string): number;
export function testSeed(env?: NodeJS.ProcessEnv): number;
export function seededRandom(seed?: number): SeededRandom;
