// Bundles the long-running daemons (queue, timers, rq-mgr) into one ESM file each, in pure ASCII.
//
// Why ASCII: V8 keeps a module's source text in the heap for the life of the process, and one
// character beyond Latin-1 anywhere in it (a → or … in a comment) makes the whole string two-byte.
// The queue bundle is ~600 KB, so that was 0.6 MB more in every queue process (bench/rss.ts, idle
// queue 55.4 -> 54.8 MB in two alternating pairs). esbuild's charset 'ascii' escapes strings and
// identifiers, but copies comments (and raw template text, regular expressions) verbatim. What is
// left beyond ASCII is written as \uXXXX, and the build fails if that changed anything but comments.
// Why one bundle per daemon: the ESM module graph of dist/ cost a queue ~9 MB of RSS (docs/performance.md).
// Why pino's own destinations are left out: the daemons always hand pino a destination (src/log.ts), so its
// sonic-boom and its transports (thread-stream, on worker threads) never run, yet requiring them loaded node's
// worker_threads and assert into every daemon (an idle queue ~0.3 MB more; docs/performance.md, Memory).
// Why the OpenTelemetry packages stay outside: a queue imports them (dynamically) only when it exports spans
// (src/queue/observers/otlp-tracing.ts); bundled, their code would be in every queue's source text, used or not.
// Why etcd3 stays outside: only a host in a fleet loads it (src/fleet/etcd-client.ts imports it at its first use), and
// its gRPC stack reads its .proto files from its own package directory at run time, which a bundle would not have;
// cockatiel, whose breaker a fleet's etcd client is given (src/fleet/etcd-breaker.ts), is loaded with it.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ENTRIES = ['src/queue/queue-main.ts', 'src/timers/timers-main.ts', 'src/cli/rq-mgr.ts'];

/** Modules only pino's own destinations use, by the package that requires them: each is bundled as a stub that throws if called. */
const LEFT_OUT = { pino: ['sonic-boom', 'thread-stream', 'worker_threads'] };

/** An esbuild plugin bundling LEFT_OUT's modules, when required from their package, as stubs that throw on use. */
const leaveOutPinoDestinations = {
  name: 'leave-out-pino-destinations',
  setup(build) {
    for (const [pkg, names] of Object.entries(LEFT_OUT)) {
      const filter = new RegExp(`^(${names.join('|')})$`);
      build.onResolve({ filter }, (args) =>
        args.importer.includes(`${path.sep}node_modules${path.sep}${pkg}${path.sep}`) ? { path: args.path, namespace: 'left-out' } : undefined,
      );
    }
    build.onLoad({ filter: /.*/, namespace: 'left-out' }, (args) => ({
      contents: `module.exports = function leftOut() { throw new Error(${JSON.stringify(`${args.path} is left out of rq's daemon bundles (tools/bundle-daemons.mjs)`)}); };`,
      loader: 'js',
    }));
  },
};

/** Every UTF-16 unit above 0x7f as a \u escape. */
function asciiOnly(text) {
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The code without comments or layout: equal for two texts that differ only in their comments. */
async function codeOf(text) {
  return (await esbuild.transform(text, { format: 'esm', minifyWhitespace: true, legalComments: 'none', charset: 'utf8' })).code;
}

/** Bundles `entries` (paths under `root`/src) into `outdir`; rejects when ASCII escaping would change code. */
export async function bundleDaemons(root, entries, outdir) {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: entries,
    outbase: 'src',
    outdir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    charset: 'ascii',
    logLevel: 'warning',
    write: false,
    plugins: [leaveOutPinoDestinations],
    external: ['@opentelemetry/*', 'etcd3', 'cockatiel'],
    // The bundled CommonJS dependencies (pino's) call require, which ESM lacks.
    banner: { js: "import { createRequire as __rqCreateRequire } from 'node:module'; const require = __rqCreateRequire(import.meta.url);" },
  });
  const outputs = [];
  for (const f of result.outputFiles) {
    const ascii = asciiOnly(f.text);
    if (ascii !== f.text && (await codeOf(ascii)) !== (await codeOf(f.text))) {
      throw new Error(
        `${path.relative(root, f.path)}: a character beyond ASCII outside a comment (a raw template or a regular expression): escaping it would change the code`,
      );
    }
    outputs.push([f.path, ascii]);
  }
  // Nothing is written unless every bundle passed.
  for (const [file, text] of outputs) {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, text);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await bundleDaemons(PROJECT, ENTRIES, 'dist');
