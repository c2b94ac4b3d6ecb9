// Live temperature graph (uPlot): actual and target per heater over the retained history window.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { markings, temps, tempsVersion } from '../lib/store.ts';
import { heaterLabel } from '../lib/format.ts';
import './temp-graph.css';

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

const LABEL_FONT = '12px system-ui, sans-serif';
const TICK_FONT = '12px system-ui, sans-serif';
let measurer: CanvasRenderingContext2D | null = null;
function textWidth(text: string, font: string): number {
  measurer ??= document.createElement('canvas').getContext('2d');
  if (!measurer) return text.length * 7;
  measurer.font = font;
  return measurer.measureText(text).width;
}
/** Rows of event labels above each other; more events that close together are merged into the last row's label. */
const LABEL_ROWS = 3;
const GAP = 6;
const clockTime = (t: number) => new Date(t * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export interface PlacedLabel { text: string; title: string; left: number; row: number; width: number }

/**
 * Places the event labels (print started, paused, resumed, cancelled, …) so that none touches another: each goes to the
 * first row where it has room, to the left of its line near the right edge; when all rows are taken at that spot it is
 * merged into the nearest label there ("Pause +2", every event in its tooltip). Pure, so it is the same at every width.
 */
export function placeLabels(marks: { x: number; text: string; title: string }[], plotWidth: number, widthOf: (t: string) => number): PlacedLabel[] {
  const placed: PlacedLabel[] = [];
  const free = (row: number, a: number, b: number, except?: PlacedLabel) =>
    placed.every((p) => p === except || p.row !== row || b + GAP <= p.left || a >= p.left + p.width + GAP);
  const position = (x: number, w: number) => Math.max(0, Math.min(plotWidth - w, x + 3 + w > plotWidth ? x - 3 - w : x + 3));
  for (const m of marks) {
    const w = widthOf(m.text);
    const left = position(m.x, w);
    let row = 0;
    while (row < LABEL_ROWS && !free(row, left, left + w)) row++;
    if (row < LABEL_ROWS) {
      placed.push({ text: m.text, title: m.title, left, row, width: w });
      continue;
    }
    // No room: merged into the label nearest to it in any row, which grows by a "+n" only if that still fits.
    let best: PlacedLabel | undefined;
    for (const p of placed) if (!best || Math.abs(p.left - left) < Math.abs(best.left - left)) best = p;
    if (!best) continue;
    const base = best.text.replace(/ \+\d+$/, '');
    const n = Number(/ \+(\d+)$/.exec(best.text)?.[1] ?? 0) + 1;
    const text = `${base} +${n}`;
    const nw = widthOf(text);
    const nl = Math.max(0, Math.min(plotWidth - nw, best.left));
    if (free(best.row, nl, nl + nw, best)) { best.text = text; best.width = nw; best.left = nl; }
    best.title += `\n${m.title}`;
  }
  return placed;
}

/** Vertical lines for the push channel's markings (print started, paused, done, …); their labels are DOM elements. */
function drawMarkings(u: uPlot): void {
  const ctx = u.ctx;
  const { left, top, width, height } = u.bbox;
  ctx.save();
  ctx.strokeStyle = 'rgba(120, 128, 140, 0.8)';
  ctx.lineWidth = 1;
  const marks: { x: number; text: string; title: string }[] = [];
  for (const m of markings.value) {
    const x = Math.round(u.valToPos(m.time, 'x', true));
    if (x < left || x > left + width) continue;
    ctx.beginPath();
    ctx.setLineDash([2, 3]);
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    const text = m.label ?? m.type;
    marks.push({ x: u.valToPos(m.time, 'x'), text, title: `${text} at ${clockTime(m.time)}` });
  }
  ctx.restore();
  let layer = u.over.querySelector<HTMLDivElement>('.event-labels');
  if (!layer) {
    layer = document.createElement('div');
    layer.className = 'event-labels';
    u.over.append(layer);
  }
  const placed = placeLabels(marks, u.over.clientWidth || width / devicePixelRatio, (t) => textWidth(t, LABEL_FONT) + 6);
  layer.replaceChildren(...placed.map((p) => {
    const span = document.createElement('span');
    span.className = 'event-label';
    span.textContent = p.text;
    span.title = p.title;
    span.style.left = `${p.left}px`;
    span.style.top = `${2 + p.row * 17}px`;
    return span;
  }));
}

/**
 * The time axis' tick spacing: the width of its widest label plus a gap, so neighbouring times never run into each other
 * whatever the font or the screen (a fixed 70 px let "08:51:30" labels touch on a phone).
 */
const tickSpace = () => textWidth(clockTime(0).replace(/\d/g, '8'), TICK_FONT) + 18;

/** The drawn time labels' boxes (CSS px from the plot's left), for the tests and for anyone inspecting the graph. */
function recordTicks(u: uPlot, splits: number[], labels: string[]): void {
  const boxes = splits.map((v, i) => {
    const w = textWidth(labels[i], TICK_FONT);
    const x = u.valToPos(v, 'x');
    return [Math.round((x - w / 2) * 10) / 10, Math.round((x + w / 2) * 10) / 10];
  });
  u.root.dataset.ticks = JSON.stringify(boxes);
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
        axes: [{
          space: tickSpace, font: TICK_FONT,
          values: (u, splits) => {
            const labels = splits.map(clockTime);
            recordTicks(u, splits, labels);
            return labels;
          },
        }, { label: '°C', size: 50, font: TICK_FONT }],
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
