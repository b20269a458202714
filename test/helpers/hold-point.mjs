// Preloaded into a daemon (NODE_OPTIONS=--import): freezes the whole process at one point (a rename, a file write, a socket send), so a test can SIGKILL it exactly there.
//
// RQ_TEST_HOLD is JSON {kind, when, fifo, reached, name?, ...}; the first call that matches writes
// `reached` (JSON: the process's pid and what matched) and then opens `fifo` for reading, which
// blocks the main thread until a writer opens it: only a test's release() does, so the process
// otherwise stays there until it is killed. One hold per test, across processes: once `reached`
// exists nothing holds again, so a queue rq-mgr restarts with the same environment passes.
// - kind "rename", {from, to}: renameSync, fs.rename or fs.promises.rename whose source matches the
//   regex `from` and destination `to`; `when` "before" (not done) or "after" (done, caller not told).
// - kind "write", {path}: fs.promises.open of a path matching `path` for writing (the spool's
//   appends); "before" the open, or "after" the handle's close (the data written and synced).
// - kind "truncate", {path}: a truncate of a handle fs.promises.open gave for a path matching `path`
//   (the journal's emptied segment); "before" the truncate, or "after" it (not yet synced).
// - kind "send", {payload}: a socket write whose bytes (latin1) match `payload`; "before" the
//   write, or "drop": not written, the socket destroyed with EPIPE (a request lost on its way).
// `name`: only the queue process started with `--name <name>` holds; any other process (rq-mgr,
// the other queues) leaves the environment as it is, so rq-mgr hands it on to the queue it starts.
import fs from 'node:fs';
import net from 'node:net';
import { syncBuiltinESMExports } from 'node:module';

const spec = JSON.parse(process.env.RQ_TEST_HOLD ?? 'null');
const argv = process.argv;
const target = spec && (spec.name === undefined || argv.some((a, i) => a === spec.name && argv[i - 1] === '--name'));

if (target) {
  // The daemon's children (scripts) are not held: they get the environment without this preload,
  // and with any other one kept (a mutation run's coverage hook, test/mutation/child-coverage.mjs).
  delete process.env.RQ_TEST_HOLD;
  const others = (process.env.NODE_OPTIONS ?? '')
    .split(/\s+/)
    .filter((o) => o && !o.endsWith('/hold-point.mjs'))
    .join(' ');
  if (others) process.env.NODE_OPTIONS = others;
  else delete process.env.NODE_OPTIONS;
  let held = false;
  /** Claims the hold: false when this process held already or another one did (`reached` exists). */
  const claim = () => {
    if (held || fs.existsSync(spec.reached)) return false;
    held = true;
    return true;
  };
  const hold = (what) => {
    fs.writeFileSync(spec.reached, JSON.stringify({ pid: process.pid, ...what }));
    fs.readFileSync(spec.fifo);
  };

  if (spec.kind === 'rename') {
    const from = new RegExp(spec.from);
    const to = new RegExp(spec.to);
    const matches = (a, b) => from.test(String(a)) && to.test(String(b)) && claim();
    const renameSync = fs.renameSync;
    const rename = fs.rename;
    const renameP = fs.promises.rename;
    const around = (a, b, done) => {
      const what = { from: String(a), to: String(b) };
      if (spec.when === 'before') hold(what);
      done();
      if (spec.when !== 'before') hold(what);
    };
    fs.renameSync = function (a, b) {
      if (!matches(a, b)) return renameSync(a, b);
      around(a, b, () => renameSync(a, b));
    };
    fs.rename = function (a, b, cb) {
      if (!matches(a, b)) return rename(a, b, cb);
      let err = null;
      around(a, b, () => {
        try {
          renameSync(a, b);
        } catch (e) {
          err = e;
        }
      });
      process.nextTick(cb, err);
    };
    fs.promises.rename = async function (a, b) {
      if (!matches(a, b)) return renameP(a, b);
      if (spec.when === 'before') hold({ from: String(a), to: String(b) });
      await renameP(a, b);
      if (spec.when !== 'before') hold({ from: String(a), to: String(b) });
    };
  }

  if (spec.kind === 'write') {
    const re = new RegExp(spec.path);
    const { O_WRONLY, O_RDWR } = fs.constants;
    const writes = (flags) => (typeof flags === 'number' ? (flags & (O_WRONLY | O_RDWR)) !== 0 : /[wa+]/.test(String(flags ?? 'r')));
    const open = fs.promises.open;
    fs.promises.open = async function (file, flags, mode) {
      if (!writes(flags) || !re.test(String(file)) || !claim()) return open(file, flags, mode);
      if (spec.when === 'before') hold({ path: String(file) });
      const fh = await open(file, flags, mode);
      if (spec.when !== 'before') {
        const close = fh.close.bind(fh);
        fh.close = async () => {
          await close();
          hold({ path: String(file) });
        };
      }
      return fh;
    };
  }

  if (spec.kind === 'truncate') {
    const re = new RegExp(spec.path);
    const open = fs.promises.open;
    fs.promises.open = async function (file, flags, mode) {
      const fh = await open(file, flags, mode);
      if (!re.test(String(file))) return fh;
      const truncate = fh.truncate.bind(fh);
      fh.truncate = async (len) => {
        if (!claim()) return truncate(len);
        if (spec.when === 'before') hold({ path: String(file) });
        await truncate(len);
        if (spec.when !== 'before') hold({ path: String(file) });
      };
      return fh;
    };
  }

  if (spec.kind === 'send') {
    const re = new RegExp(spec.payload);
    const write = net.Socket.prototype.write;
    net.Socket.prototype.write = function (chunk, ...rest) {
      const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? Buffer.from(chunk).toString('latin1') : '';
      if (!re.test(text) || !claim()) return write.call(this, chunk, ...rest);
      if (spec.when === 'drop') {
        fs.writeFileSync(spec.reached, JSON.stringify({ pid: process.pid, payload: text }));
        this.destroy(Object.assign(new Error('write EPIPE (dropped by the test)'), { code: 'EPIPE' }));
        return false;
      }
      hold({ payload: text });
      return write.call(this, chunk, ...rest);
    };
  }
  syncBuiltinESMExports();
}
