// rq UI: draws the stats page's charts with uPlot from each `[data-chart]` element's numbers (computed by the server; the same numbers are in the table under each chart).
import uPlot from './uPlot.esm.js';

const HEIGHT = 200;
const STROKES = { done: '#2e7d32', err: '#c62828', wait: '#1565c0', run: '#6a1b9a' };
const FILLS = { done: 'rgba(46,125,50,0.45)', err: 'rgba(198,40,40,0.55)', wait: 'rgba(21,101,192,0.45)', run: 'rgba(106,27,154,0.45)' };
/** Counts are whole numbers: no axis tick between them. */
const WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000];

/** Bars; two series share each x side by side (done left of it, err right), so neither hides the other. */
function barSeries(s, i, n) {
  const align = n === 1 ? 0 : i === 0 ? -1 : 1;
  return {
    label: s.label,
    stroke: STROKES[s.label] ?? '#555',
    fill: FILLS[s.label] ?? 'rgba(0,0,0,0.3)',
    width: 1,
    paths: uPlot.paths.bars({ size: [n === 1 ? 0.9 : 0.45, 48], align }),
    points: { show: false },
  };
}

/** p50/p95/p99 as dashed lines over the bins they fall in; quantiles sharing a bin share a line and a label. */
function marksPlugin(marks) {
  const byX = new Map();
  for (const m of marks) byX.set(m.x, [...(byX.get(m.x) ?? []), m.label]);
  return {
    hooks: {
      draw: (u) => {
        const ctx = u.ctx;
        const px = uPlot.pxRatio;
        ctx.save();
        ctx.setLineDash([4 * px, 3 * px]);
        ctx.lineWidth = px;
        ctx.strokeStyle = '#333';
        ctx.fillStyle = '#333';
        ctx.font = `${11 * px}px sans-serif`;
        ctx.textAlign = 'left';
        for (const [x, labels] of byX) {
          const left = Math.round(u.valToPos(x, 'x', true));
          ctx.beginPath();
          ctx.moveTo(left, u.bbox.top);
          ctx.lineTo(left, u.bbox.top + u.bbox.height);
          ctx.stroke();
          ctx.fillText(labels.join(' '), left + 3 * px, u.bbox.top + 12 * px);
        }
        ctx.restore();
      },
    },
  };
}

function options(data, width) {
  const bins = data.kind === 'bins';
  const step = data.x.length > 1 ? data.x[1] - data.x[0] : bins ? 1 : 60;
  const hhmm = (ts) => new Date(ts * 1000).toISOString().slice(11, 16);
  // Times in UTC and 24 h, as the tables under the charts and the statistics' days are.
  const xAxis = bins
    ? { values: (u, splits) => splits.map((v) => data.labels[v] ?? ''), incrs: WHOLE, space: 36 }
    : { values: (u, splits) => splits.map(hhmm), space: 60 };
  return {
    width,
    height: HEIGHT,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    // Half a step either side, so the first and last bars are drawn whole.
    scales: { x: { time: !bins, range: (u, min, max) => [min - step / 2, max + step / 2] }, y: { range: (u, min, max) => [0, Math.max(1, max)] } },
    axes: [xAxis, { incrs: WHOLE, values: (u, splits) => splits.map(String), size: 44 }],
    series: [
      bins ? { label: 'bin', value: (u, v) => (v === null ? '-' : (data.labels[v] ?? '')) } : { label: 'UTC', value: (u, v) => (v === null ? '-' : hhmm(v)) },
      ...data.series.map((s, i) => barSeries(s, i, data.series.length)),
    ],
    cursor: { drag: { x: false, y: false } },
    plugins: data.marks?.length ? [marksPlugin(data.marks)] : [],
  };
}

function draw(box) {
  const data = JSON.parse(box.dataset.chart);
  const width = () => Math.max(240, box.clientWidth);
  const plot = new uPlot(options(data, width()), [data.x, ...data.series.map((s) => s.values)], box);
  box.classList.add('drawn');
  new ResizeObserver(() => {
    if (plot.width !== width()) plot.setSize({ width: width(), height: HEIGHT });
  }).observe(box);
}

for (const box of document.querySelectorAll('[data-chart]')) draw(box);
