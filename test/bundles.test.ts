// The daemon bundles tools/bundle-daemons.mjs writes are pure ASCII: V8 keeps each source text for the process's
// life, and one character beyond Latin-1 makes it two-byte (0.6 MB more per queue process, bench/rss.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT } from './helpers/rq-root.js';
// @ts-expect-error: a build script in plain JavaScript, without type declarations
import { bundleDaemons } from '../tools/bundle-daemons.mjs';

const BUNDLES = ['dist/queue/queue-main.js', 'dist/timers/timers-main.js', 'dist/cli/rq-mgr.js'];

describe('daemon bundles', () => {
  it.each(BUNDLES)('%s holds no character outside ASCII', (file) => {
    const text = fs.readFileSync(path.join(PROJECT, file), 'utf8');
    const found = /[^\x00-\x7f]/.exec(text);
    expect(found && { char: found[0], at: text.slice(Math.max(0, found.index - 60), found.index + 20) }).toBeNull();
  });

  // Each of these cost every daemon heap at start whether it was used or not (docs/performance.md, Memory):
  // node:crypto and node:zlib are loaded at their first call (src/lazy-builtins.ts), pino's own destinations left out.
  it.each(BUNDLES)('%s loads no crypto, zlib, worker_threads or assert at start', (file) => {
    const text = fs.readFileSync(path.join(PROJECT, file), 'utf8');
    const eager = /^import .* from "(node:)?(crypto|zlib)";$|require\("(node:)?(worker_threads|assert)"\)/m.exec(text);
    expect(eager?.[0] ?? null).toBeNull();
  });

  // A queue loads the SDK only when it exports spans (src/queue/observers/otlp-tracing.ts): none of it is in the bundle, nothing imports it at start.
  it.each(BUNDLES)('%s imports OpenTelemetry only on demand, from node_modules', (file) => {
    const text = fs.readFileSync(path.join(PROJECT, file), 'utf8');
    expect(/^import .* from "@opentelemetry\//m.exec(text)?.[0] ?? null).toBeNull();
    expect(text).not.toMatch(/class BatchSpanProcessor|OTLPExporterBase/);
    const imports = [...text.matchAll(/import\("(@opentelemetry\/[^"]+)"\)/g)].map((m) => m[1]).sort();
    expect(imports).toEqual(
      file === 'dist/queue/queue-main.js'
        ? ['@opentelemetry/api', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/resources', '@opentelemetry/sdk-trace-base']
        : [],
    );
  });

  // A host without a fleet never loads etcd3 (idle memory): rq-mgr imports it only when config.json names a fleet,
  // from node_modules at run time (its gRPC stack reads its .proto files there); test/fleet/ runs it from the bundle.
  it('dist/cli/rq-mgr.js imports etcd3 and cockatiel (its breaker) only lazily, and no other bundle imports them', () => {
    const mgr = fs.readFileSync(path.join(PROJECT, 'dist/cli/rq-mgr.js'), 'utf8');
    for (const pkg of ['etcd3', 'cockatiel']) {
      expect(mgr.match(new RegExp(`import\\("${pkg}"\\)`, 'g'))).toHaveLength(1);
      for (const file of BUNDLES) expect(fs.readFileSync(path.join(PROJECT, file), 'utf8')).not.toMatch(new RegExp(`from "${pkg}"|require\\("${pkg}"\\)`));
    }
  });

  describe('the escaping', () => {
    let dir = '';
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    /** A project with one entry, src/main.ts, holding `code`. */
    function project(code: string): string {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rq-bundle-'));
      fs.mkdirSync(path.join(dir, 'src'));
      fs.writeFileSync(path.join(dir, 'src', 'main.ts'), code);
      return dir;
    }

    it('escapes comment text and leaves the code as it was', async () => {
      // A comment inside an object literal is one esbuild keeps, as in the real bundles.
      const root = project('export const o = {\n  /** a → b … */\n  text: "µs → ms",\n};\n');
      await bundleDaemons(root, ['src/main.ts'], 'dist');
      const out = fs.readFileSync(path.join(root, 'dist', 'main.js'), 'utf8');
      expect(out).not.toMatch(/[^\x00-\x7f]/);
      expect(out).toContain('a \\u2192 b \\u2026');
      const mod = (await import(path.join(root, 'dist', 'main.js'))) as { o: { text: string } };
      expect(mod.o.text).toBe('µs → ms');
    });

    it('refuses a character beyond ASCII in a raw template, and writes nothing', async () => {
      const root = project('export const raw = String.raw`→`;\n');
      await expect(bundleDaemons(root, ['src/main.ts'], 'dist')).rejects.toThrow('dist/main.js: a character beyond ASCII outside a comment');
      expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
    });
  });
});
