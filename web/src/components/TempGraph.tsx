// Live temperature graph (uPlot): actual and target per heater over the retained history window.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { markings, temps, tempsVersion } from '../lib/store.ts';
import { heaterLabel } from '../lib/format.ts';

const COLORS: Record<string, string> = { tool0: '#d9480f', tool1: '#e67700', tool2: '#862e9c', tool3: '#5f3dc4', bed: '#1971c2', chamber: '#2b8a3e' };
const colorOf = (key: string) => COLORS[key] ?? '#495057';

export function heaterKeys(): string[] {
  const last = temps[temps.length - 1];
  if (!last) return [];
  return Object.keys(last).filter((k) => k !== 'time' && typeof last[k] === 'object').sort((a, b) => {
    const rank = (k: string) => (k.startsWith('tool') ? 0 : k === 'bed' ? 1 : k === 'chamber' ? 2 : 3);
    return rank(a) - rank(b) || a.localeCompare(b);
  });
}

/** Vertical lines for the push channel's markings (print started, paused, done, …). */
function drawMarkings(u: uPlot): void {
  const ctx = u.ctx;
  const { left, top, width, height } = u.bbox;
  ctx.save();
  ctx.strokeStyle = 'rgba(73, 80, 87, 0.6)';
  ctx.fillStyle = 'rgba(73, 80, 87, 0.9)';
  ctx.lineWidth = 1;
  ctx.font = `${Math.round(11 * devicePixelRatio)}px system-ui, sans-serif`;
  // Each label goes to the first row where it does not run into the previous one (pause and resume are often seconds
  // apart, a cancel, a finish and the next start too).
  const rowEnds: number[] = [];
  const line = 12 * devicePixelRatio;
  for (const m of markings.value) {
    const x = Math.round(u.valToPos(m.time, 'x', true));
    if (x < left || x > left + width) continue;
    ctx.beginPath();
    ctx.setLineDash([2, 3]);
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    const text = m.label ?? m.type;
    const w = ctx.measureText(text).width;
    // Labels near the right edge are drawn to the left of their line so they stay inside the plot.
    const start = x + 3 + w > left + width ? x - 3 - w : x + 3;
    let row = rowEnds.findIndex((end) => start > end + 4);
    if (row < 0) row = rowEnds.length;
    rowEnds[row] = start + w;
    ctx.fillText(text, start, top + line * (1 + row));
  }
  ctx.restore();
}

/** Dots only while there are too few samples for a line. */
const fewSamples = (u: uPlot) => u.data[0].length < 3;

function xRange(u: uPlot): uPlot.Range.MinMax {
  const xs = u.data[0];
  if (!xs.length) return [0, 120];
  const last = xs[xs.length - 1];
  return [Math.min(xs[0], last - 120), last];
}

/** Without a pointer over the graph the legend shows the latest values instead of dashes. */
function latestInLegend(u: uPlot): void {
  const n = u.data[0].length;
  if (n && !((u.cursor.left ?? -1) >= 0)) u.setLegend({ idx: n - 1 }, false);
}

function buildData(keys: string[]): uPlot.AlignedData {
  const times = temps.map((t) => t.time);
  const cols: (number | null)[][] = [];
  for (const k of keys) {
    const actual: (number | null)[] = [];
    const target: (number | null)[] = [];
    for (const t of temps) {
      const h = t[k];
      actual.push(h && typeof h === 'object' ? h.actual : null);
      target.push(h && typeof h === 'object' ? h.target : null);
    }
    cols.push(actual, target);
  }
  return [times, ...cols] as uPlot.AlignedData;
}

export function TempGraph() {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const keysRef = useRef('');
  const version = tempsVersion.value;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const keys = heaterKeys();
    if (keys.length === 0) {
      // No samples (a reconnect replaced them): the old curves must go with them.
      plot.current?.destroy();
      plot.current = null;
      keysRef.current = '';
      return;
    }
    const sig = keys.join(',');
    if (!plot.current || sig !== keysRef.current) {
      plot.current?.destroy();
      keysRef.current = sig;
      const series: uPlot.Series[] = [{}];
      // A target changes in one step; drawn as a ramp between samples it would look like a heating curve.
      const stepped = uPlot.paths.stepped?.({ align: 1 });
      for (const k of keys) {
        series.push({ label: `${heaterLabel(k)}`, stroke: colorOf(k), width: 2, points: { show: fewSamples }, value: (_u, v) => (v === null ? '–' : `${v.toFixed(1)}°`) });
        series.push({ label: `${heaterLabel(k)} target`, stroke: colorOf(k), width: 1, dash: [6, 4], points: { show: false }, paths: stepped, value: (_u, v) => (v === null ? '–' : `${v.toFixed(0)}°`) });
      }
      plot.current = new uPlot({
        width: el.clientWidth || 600,
        height: Math.max(220, Math.min(360, Math.round((el.clientWidth || 600) * 0.45))),
        series,
        // At least two minutes wide, so the first samples after connecting do not stretch over years.
        // (uPlot widens a single sample to 86400 / ms seconds, i.e. years, so the range comes from the data itself.)
        scales: { x: { time: true, range: xRange }, y: { range: (_u, min, max) => [Math.min(0, min ?? 0), Math.max(50, Math.ceil(((max ?? 0) + 10) / 10) * 10)] } },
        // One line of plain clock time per tick, spaced so labels never run into each other (uPlot's default adds a
        // second line with the date, which collided with the neighbouring ticks).
        // Room on the right for half of the last time label, centred on its tick (uPlot's own is half the °C axis: the
        // label was cut to "08:51:30 A").
        padding: [null, 45, null, null],
        axes: [{ space: 70, values: (_u, splits) => splits.map((v) => new Date(v * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' })) },
          { label: '°C', size: 50 }],
        legend: { live: true },
        cursor: { drag: { x: false, y: false } },
        hooks: { draw: [drawMarkings, latestInLegend] },
      }, buildData(keys), el);
    } else {
      plot.current.setData(buildData(keys));
    }
  }, [version]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => {
      const w = el.clientWidth;
      if (plot.current && w > 0) plot.current.setSize({ width: w, height: Math.max(220, Math.min(360, Math.round(w * 0.45))) });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);

  return (
    <div class="graph" ref={box} data-testid="temp-graph" data-points={temps.length}>
      {temps.length === 0 && <p class="muted">No temperature data yet. Connect to the printer.</p>}
    </div>
  );
}
