// Bundles the long-running daemons (queue, timers, rq-mgr) into one ESM file each, in pure ASCII.
//
// Why ASCII: V8 keeps a module's source text in the heap for the life of the process, and one
// character outside Latin-1 anywhere in it (a § or → in a comment) makes the whole string two-byte.
// The queue bundle is ~600 KB, so that was 0.6 MB more in every queue process (bench/rss.ts, idle
// queue 55.4 -> 54.8 MB in two alternating pairs). esbuild's charset 'ascii' escapes code; the
// comments it keeps are copied verbatim, so what is left outside ASCII can only be comment text,
// and is written as \uXXXX there.
// Why one bundle per daemon: the ESM module graph of dist/ cost a queue ~9 MB of RSS (docs/performance.md).
import fs from 'node:fs/promises';
import * as esbuild from 'esbuild';

const ENTRIES = ['src/queue/queue-main.ts', 'src/timers/timers-main.ts', 'src/cli/rq-mgr.ts'];

/** Every UTF-16 unit above 0x7f as a \u escape. */
function asciiOnly(text) {
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const result = await esbuild.build({
  entryPoints: ENTRIES,
  outbase: 'src',
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  charset: 'ascii',
  logLevel: 'warning',
  write: false,
  // The bundled CommonJS dependencies (pino's) call require, which ESM lacks.
  banner: { js: "import { createRequire as __rqCreateRequire } from 'node:module'; const require = __rqCreateRequire(import.meta.url);" },
});
await Promise.all(result.outputFiles.map((f) => fs.writeFile(f.path, asciiOnly(f.text))));
