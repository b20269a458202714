// Latency bounds of tests, scaled by RQ_TEST_TIME_SCALE: `npm run mutate` runs instrumented code on
// a machine its own workers load, where an on-time fire may be late without any behaviour changing.
const scale = Number(process.env.RQ_TEST_TIME_SCALE ?? '1');

/** A time bound in ms as the plain suite asserts it, stretched only where the scale says so. */
export function budget(ms: number): number {
  return ms * (Number.isFinite(scale) && scale >= 1 ? scale : 1);
}
