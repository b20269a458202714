// The chart library of the stats page: uPlot's ES module and stylesheet, served from node_modules by the web itself (no CDN, so CSP `script-src 'self'` holds).
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

export interface ChartLibFiles {
  js: string;
  css: string;
}

/** Paths under relative_root, as layout's `scripts` and `styles` name them. */
export const CHART_JS = 'uPlot.esm.js';
export const CHART_CSS = 'uPlot.min.css';

/** uPlot's files in the installed package (its `main` is dist/uPlot.cjs.js; the ES module and the css sit beside it). */
export function chartLibFiles(): ChartLibFiles {
  const dist = path.dirname(createRequire(import.meta.url).resolve('uplot'));
  return { js: path.join(dist, CHART_JS), css: path.join(dist, CHART_CSS) };
}

/** `/js/uPlot.esm.js` and `/css/uPlot.min.css`, beside the app's own static files. */
export function serveChartLib(scope: FastifyInstance, files: ChartLibFiles): void {
  scope.get(`/js/${CHART_JS}`, { schema: { hide: true } }, (_req, reply) => reply.sendFile(path.basename(files.js), path.dirname(files.js)));
  scope.get(`/css/${CHART_CSS}`, { schema: { hide: true } }, (_req, reply) => reply.sendFile(path.basename(files.css), path.dirname(files.css)));
}
