// G-code tab: layer-by-layer preview of a local file on a canvas, with a layer slider; follows the printing layer.
import { at } from '../lib/base.ts';
import { useEffect, useRef, useState } from 'preact/hooks';
import { encodePath } from '../lib/api.ts';
import type { ParsedGcode } from '../lib/gcode-layers.ts';
import { currentProfile, currentZ, files, job, previewPath, printerState } from '../lib/store.ts';
import type { FileEntry } from '../lib/types.ts';
import { cancelObject, objectOutlines, type ObjectOutline } from './CancelObjects.tsx';
import { insideOutline } from '../lib/polygon.ts';

/** Canvas pixels → bed mm, as the last draw laid the bed out (the click on an object's outline). */
type ToBed = (cx: number, cy: number) => [number, number];

function gcodeFiles(entries: FileEntry[], out: FileEntry[] = []): FileEntry[] {
  for (const e of entries) {
    if (e.type === 'folder') gcodeFiles(e.children ?? [], out);
    else if (e.origin === 'local' && e.type === 'machinecode') out.push(e);
  }
  return out;
}

function draw(canvas: HTMLCanvasElement, parsed: ParsedGcode, index: number, showTravel: boolean, fitPart: boolean,
  objects: ObjectOutline[], active: number): ToBed | null {
  const dpr = window.devicePixelRatio || 1;
  const size = canvas.clientWidth;
  canvas.width = size * dpr;
  canvas.height = size * dpr;
  const ctx = canvas.getContext('2d');
  if (!ctx) return null;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, size, size);

  // Fit the printer's bed if known (so the part's position shows), else the part itself.
  const vol = currentProfile.value?.volume;
  const b = parsed.bounds;
  let minX = b.minX, maxX = b.maxX, minY = b.minY, maxY = b.maxY;
  if (vol && vol.width > 0 && vol.depth > 0 && !fitPart) {
    const centered = vol.origin === 'center' || vol.formFactor === 'circular';
    minX = Math.min(minX, centered ? -vol.width / 2 : 0);
    maxX = Math.max(maxX, centered ? vol.width / 2 : vol.width);
    minY = Math.min(minY, centered ? -vol.depth / 2 : 0);
    maxY = Math.max(maxY, centered ? vol.depth / 2 : vol.depth);
    ctx.fillStyle = cssColor('--bed', '#f1f3f5');
    const pad0 = 8;
    const s0 = (size - 2 * pad0) / Math.max(maxX - minX, maxY - minY, 1);
    const bx = centered ? -vol.width / 2 : 0;
    const by = centered ? -vol.depth / 2 : 0;
    ctx.fillRect(pad0 + (bx - minX) * s0, size - pad0 - (by + vol.depth - minY) * s0, vol.width * s0, vol.depth * s0);
  }
  const pad = 8;
  const scale = (size - 2 * pad) / Math.max(maxX - minX, maxY - minY, 1);
  const px = (x: number) => pad + (x - minX) * scale;
  const py = (y: number) => size - pad - (y - minY) * scale;

  const stroke = (layerIdx: number, color: string, width: number, extruding: boolean) => {
    const l = parsed.layers[layerIdx];
    if (!l) return;
    ctx.beginPath();
    const s = l.segments;
    for (let i = 0; i < l.extruding.length; i++) {
      if ((l.extruding[i] === 1) !== extruding) continue;
      ctx.moveTo(px(s[i * 4]), py(s[i * 4 + 1]));
      ctx.lineTo(px(s[i * 4 + 2]), py(s[i * 4 + 3]));
    }
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    ctx.stroke();
  };
  stroke(index - 1, cssColor('--bed-line', '#ced4da'), 1, true);
  if (showTravel) stroke(index, '#74c0fc', 0.5, false);
  stroke(index, '#e8590c', 1.5, true);
  // The objects' outlines (cancel-object): click one to cancel it; cancelled ones hatched grey.
  for (const o of objects) {
    if (o.polygon.length < 3) continue;
    ctx.beginPath();
    o.polygon.forEach(([x, y], i) => (i === 0 ? ctx.moveTo(px(x), py(y)) : ctx.lineTo(px(x), py(y))));
    ctx.closePath();
    ctx.setLineDash(o.cancelled ? [2, 3] : [5, 3]);
    ctx.strokeStyle = o.cancelled ? '#868e96' : o.id === active ? '#2f9e44' : '#1c7ed6';
    ctx.lineWidth = 1.5;
    ctx.stroke();
    if (o.cancelled) { ctx.fillStyle = 'rgba(134,142,150,0.25)'; ctx.fill(); }
    ctx.setLineDash([]);
  }
  return (cx, cy) => [minX + (cx - pad) / scale, minY + (size - pad - cy) / scale];
}

export function PreviewTab() {
  const canvas = useRef<HTMLCanvasElement>(null);
  const toBed = useRef<ToBed | null>(null);
  const [parsed, setParsed] = useState<ParsedGcode | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState('');
  const [layer, setLayer] = useState(0);
  const [follow, setFollow] = useState(true);
  const [travel, setTravel] = useState(false);
  const [fitPart, setFitPart] = useState(false);
  const choices = gcodeFiles(files.value?.files ?? []);
  const printingPath = job.value?.file?.origin === 'local' ? job.value.file.path ?? null : null;
  const path = previewPath.value ?? printingPath;

  useEffect(() => {
    if (!path) return;
    setLoading(true);
    setError('');
    setParsed(null);
    const worker = new Worker(new URL('../lib/gcode-worker.ts', import.meta.url), { type: 'module' });
    worker.onmessage = (e: MessageEvent<{ ok: boolean; parsed?: ParsedGcode; error?: string }>) => {
      setLoading(false);
      if (e.data.ok && e.data.parsed) {
        setParsed(e.data.parsed);
        setLayer(0);
      } else setError(e.data.error ?? 'could not read the file');
      worker.terminate();
    };
    worker.postMessage({ url: at(`/downloads/files/local/${encodePath(path)}`) });
    return () => worker.terminate();
  }, [path]);

  // While this file prints, show the layer at the current nozzle height.
  const f = printerState.value.flags;
  const followZ = follow && parsed && path === printingPath && (f.printing || f.paused) ? currentZ.value : null;
  let shown = layer;
  if (followZ !== null && parsed) {
    const i = parsed.layers.findIndex((l) => l.z >= followZ - 1e-3);
    if (i >= 0) shown = i;
  }

  // Outlines only for the file the object list is about (the selected or printing one).
  const outlines = objectOutlines.value;
  const objects = path !== null && outlines.path === path ? outlines.objects : [];
  useEffect(() => {
    if (canvas.current && parsed) toBed.current = draw(canvas.current, parsed, shown, travel, fitPart, objects, outlines.active);
  }, [parsed, shown, travel, fitPart, objects, outlines.active]);
  const printingThis = path === printingPath && (f.printing || f.paused || f.pausing);
  const onCanvasClick = (e: MouseEvent) => {
    const map = toBed.current;
    if (!map || !printingThis || !canvas.current) return;
    const r = canvas.current.getBoundingClientRect();
    const [x, y] = map(e.clientX - r.left, e.clientY - r.top);
    const hit = objects.find((o) => !o.cancelled && !o.ignore && insideOutline(o.polygon, x, y));
    if (hit) void cancelObject(hit);
  };

  return (
    <div class="preview">
      <label>File
        <select value={path ?? ''} onChange={(e) => (previewPath.value = e.currentTarget.value || null)} data-testid="preview-file">
          <option value="">Choose a file…</option>
          {choices.map((c) => <option key={c.path} value={c.path}>{c.path}</option>)}
        </select>
      </label>
      {loading && <p class="muted">Loading and analysing…</p>}
      {error && <p class="error">{error}</p>}
      {parsed && parsed.layers.length === 0 && <p class="muted">No extruding moves in this file.</p>}
      {parsed && parsed.layers.length > 0 && (
        <>
          <canvas ref={canvas} class="layer-canvas" data-testid="preview-canvas" data-layers={parsed.layers.length} onClick={onCanvasClick}
            title={printingThis && objects.length > 0 ? 'Click an object\'s outline to cancel it' : undefined} />
          <div class="rate">
            <input type="range" min="0" max={parsed.layers.length - 1} value={shown} aria-label="Layer"
              onInput={(e) => { setFollow(false); setLayer(Number(e.currentTarget.value)); }} />
            <span data-testid="preview-layer">Layer {shown + 1} / {parsed.layers.length} · Z {parsed.layers[shown]?.z.toFixed(2)} mm</span>
          </div>
          <div class="filters">
            <label class="check"><input type="checkbox" checked={travel} onChange={(e) => setTravel(e.currentTarget.checked)} /> Show travel moves</label>
            <label class="check"><input type="checkbox" checked={fitPart} onChange={(e) => setFitPart(e.currentTarget.checked)} /> Zoom to the part</label>
            {path === printingPath && <label class="check"><input type="checkbox" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} /> Follow print</label>}
          </div>
        </>
      )}
    </div>
  );
}

/** A colour from the theme's custom properties, so the bed follows light and dark. */
function cssColor(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}
