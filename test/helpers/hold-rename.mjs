// Preloaded into a daemon (NODE_OPTIONS=--import): freezes the whole process at one rename, so a test can SIGKILL it at exactly that point.
//
// RQ_TEST_HOLD_RENAME is JSON {from, to, when, fifo, reached}: the first rename (renameSync,
// fs.rename or fs.promises.rename) whose source matches the regex `from` and destination the regex
// `to` writes `reached` (the two paths) and then opens `fifo` for reading, which blocks the main
// thread until a writer opens it: none ever does, so the process stays there until it is killed.
// `when` is "before" (the rename not done) or "after" (done, its caller not yet told).
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const spec = JSON.parse(process.env.RQ_TEST_HOLD_RENAME ?? 'null');
// The daemon's children (scripts) are not held: they get the environment without the preload.
delete process.env.RQ_TEST_HOLD_RENAME;
delete process.env.NODE_OPTIONS;

if (spec) {
  const from = new RegExp(spec.from);
  const to = new RegExp(spec.to);
  let held = false;
  const hold = (a, b) => {
    held = true;
    fs.writeFileSync(spec.reached, `${a}\n${b}\n`);
    fs.readFileSync(spec.fifo);
  };
  const matches = (a, b) => !held && from.test(String(a)) && to.test(String(b));
  const renameSync = fs.renameSync;
  const rename = fs.rename;
  const renameP = fs.promises.rename;
  fs.renameSync = function (a, b) {
    if (!matches(a, b)) return renameSync(a, b);
    if (spec.when === 'before') hold(a, b);
    renameSync(a, b);
    hold(a, b);
  };
  fs.rename = function (a, b, cb) {
    if (!matches(a, b)) return rename(a, b, cb);
    if (spec.when === 'before') hold(a, b);
    renameSync(a, b);
    hold(a, b);
  };
  fs.promises.rename = async function (a, b) {
    if (!matches(a, b)) return renameP(a, b);
    if (spec.when === 'before') hold(a, b);
    await renameP(a, b);
    hold(a, b);
  };
  syncBuiltinESMExports();
}
