// The Bed mesh page: the latest (or a chosen) mesh as a 3D surface or a heat map with its colour scale in mm, the
// difference between two meshes, the history, and a Probe button (/api/plugin/bedmesh).
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, post } from '../../lib/api.ts';
import { attempt, can } from '../../lib/store.ts';
import { colour, difference, drawHeatMap, drawSurface, limitOf, type Grid, type View } from './mesh-view.ts';

interface Mesh extends Grid { id: string; time: number; format: string; probeCount: number; min: number; max: number; range: number; mean: number }
interface Meshes { probing: boolean; latest: Mesh | null; history: Mesh[] }

const FORMATS: Record<string, string> = { 'marlin-bilinear': 'Marlin bilinear', 'marlin-ubl': 'Marlin UBL', 'marlin-mbl': 'Marlin MBL', prusa: 'Prusa G81', klipper: 'Klipper' };

function MeshCanvas({ grid, mode }: { grid: Grid; mode: '3d' | 'heat' }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const [view, setView] = useState<View>({ yaw: -0.6, pitch: 0.6, zoom: 1, exaggerate: 1 });
  const drag = useRef<{ x: number; y: number } | null>(null);
  useEffect(() => {
    const canvas = ref.current;
    const ctx = canvas?.getContext('2d');
    if (!canvas || !ctx) return;
    const w = canvas.clientWidth || 600;
    const h = canvas.clientHeight || 400;
    const ratio = window.devicePixelRatio || 1;
    canvas.width = w * ratio;
    canvas.height = h * ratio;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    const text = getComputedStyle(canvas).color || '#222';
    if (mode === 'heat') drawHeatMap(ctx, grid, w, h, text);
    else drawSurface(ctx, grid, w, h, view, text);
  }, [grid, mode, view]);
  return (
    <canvas ref={ref} class="mesh-canvas" role="img" aria-label={mode === 'heat' ? 'Bed mesh heat map' : 'Bed mesh 3D surface: drag to rotate, wheel to zoom'}
      onPointerDown={(e) => { drag.current = { x: e.clientX, y: e.clientY }; (e.currentTarget as HTMLCanvasElement).setPointerCapture(e.pointerId); }}
      onPointerMove={(e) => {
        if (!drag.current || mode !== '3d') return;
        const dx = e.clientX - drag.current.x, dy = e.clientY - drag.current.y;
        drag.current = { x: e.clientX, y: e.clientY };
        setView((v) => ({ ...v, yaw: v.yaw + dx / 150, pitch: Math.max(0.1, Math.min(1.5, v.pitch + dy / 150)) }));
      }}
      onPointerUp={() => { drag.current = null; }}
      onWheel={(e) => { if (mode !== '3d') return; e.preventDefault(); setView((v) => ({ ...v, zoom: Math.max(0.3, Math.min(4, v.zoom * (e.deltaY < 0 ? 1.1 : 0.9))) })); }} />
  );
}

function Scale({ grid }: { grid: Grid }) {
  const limit = limitOf(grid.z);
  const flat = grid.z.flat();
  const min = Math.min(...flat), max = Math.max(...flat);
  return (
    <div class="mesh-scale" aria-label="Colour scale">
      <span>{(-limit).toFixed(3)} mm</span>
      <span class="mesh-scale-bar" style={{ background: `linear-gradient(to right, ${colour(-limit, limit)}, ${colour(0, limit)}, ${colour(limit, limit)})` }} />
      <span>+{limit.toFixed(3)} mm</span>
      <span class="mesh-stats">min {min.toFixed(3)} · max {max.toFixed(3)} · range {(max - min).toFixed(3)} mm</span>
    </div>
  );
}

export function BedMeshTab() {
  const [data, setData] = useState<Meshes | null>(null);
  const [chosen, setChosen] = useState<string | null>(null);
  const [compare, setCompare] = useState<string | null>(null);
  const [mode, setMode] = useState<'3d' | 'heat'>('3d');
  const load = () => get<Meshes>('/api/plugin/bedmesh').then(setData, () => {});
  useEffect(() => { void load(); }, []);
  // While a probe runs, look again every two seconds until its mesh is there.
  useEffect(() => {
    if (!data?.probing) return;
    const timer = setInterval(() => void load(), 2000);
    return () => clearInterval(timer);
  }, [data?.probing]);
  if (!data) return <p class="muted">Loading bed meshes…</p>;
  const mesh = data.history.find((m) => m.id === chosen) ?? data.latest;
  const base = data.history.find((m) => m.id === compare) ?? null;
  const diff = mesh && base ? difference(base, mesh) : null;
  const shown = diff ?? mesh;
  return (
    <section class="bed-mesh" aria-label="Bed mesh">
      <div class="buttons spaced">
        {can('CONTROL') && <button class="primary" disabled={data.probing}
          onClick={() => void attempt('Probe the bed', async () => { await post('/api/plugin/bedmesh', { command: 'probe' }); await load(); })}>
          {data.probing ? 'Probing…' : 'Probe bed'}</button>}
        <div role="group" aria-label="View">
          <button aria-pressed={mode === '3d'} onClick={() => setMode('3d')}>3D</button>
          <button aria-pressed={mode === 'heat'} onClick={() => setMode('heat')}>Heat map</button>
        </div>
      </div>
      {!mesh && <p class="muted">No bed mesh yet. Probe the bed, or print a file that runs G29: every mesh the printer reports is kept here.</p>}
      {mesh && shown && (
        <>
          <h3>{diff ? `Difference: ${new Date(mesh.time).toLocaleString()} minus ${new Date(base!.time).toLocaleString()}` : `Mesh of ${new Date(mesh.time).toLocaleString()}`}</h3>
          <p class="muted">{FORMATS[mesh.format] ?? mesh.format} · {mesh.probeCount} points · {mesh.x.length}×{mesh.y.length}</p>
          {base && !diff && <p class="error">These two meshes have different grids; they cannot be compared point by point.</p>}
          <MeshCanvas grid={shown} mode={mode} />
          <Scale grid={shown} />
        </>
      )}
      {data.history.length > 0 && (
        <table class="mesh-history" aria-label="Mesh history">
          <thead><tr><th>Time</th><th>Range</th><th>Show</th><th>Compare with</th></tr></thead>
          <tbody>
            {data.history.map((m) => (
              <tr key={m.id}>
                <td>{new Date(m.time).toLocaleString()}</td><td>{m.range.toFixed(3)} mm</td>
                <td><input type="radio" name="mesh-show" aria-label={`Show the mesh of ${new Date(m.time).toLocaleString()}`} checked={m.id === mesh?.id} onChange={() => setChosen(m.id)} /></td>
                <td><input type="radio" name="mesh-compare" aria-label={`Compare with the mesh of ${new Date(m.time).toLocaleString()}`} checked={m.id === compare} onChange={() => setCompare(m.id)} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {compare && <button onClick={() => setCompare(null)}>Stop comparing</button>}
    </section>
  );
}
