// Seeded randomness for tests: one seed per run, printed with failures, so a failing run can be replayed.
// Plain JavaScript so that test/helpers/spool-worker.mjs (run by node, not vitest) shares it.

/** mulberry32: a 32-bit PRNG, small and fast; plenty for picking delays and operations. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Parses a seed given on the command line or in RQ_TEST_SEED; throws naming `label` when it is not one. */
export function parseSeed(text, label) {
  if (!/^\d+$/.test(String(text)) || Number(text) > 0xffffffff) {
    throw new Error(`${label}: expected a whole number from 0 to 4294967295, received ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** RQ_TEST_SEED when set (to replay a failure), else a fresh seed for this run. */
export function testSeed(env = process.env) {
  const given = env.RQ_TEST_SEED;
  if (given !== undefined && given !== '') return parseSeed(given, 'RQ_TEST_SEED');
  return Math.floor(Math.random() * 0x100000000);
}

/** A seeded source of numbers; `replay` goes into assertion messages. */
export function seededRandom(seed = testSeed()) {
  const next = mulberry32(seed);
  return {
    seed,
    replay: `replay with RQ_TEST_SEED=${seed}`,
    next,
    /** A whole number in [0, n). */
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
  };
}
