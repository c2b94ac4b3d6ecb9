// Control tab: jog and home, extrude/retract, feed and flow rate, fan, motors, and the custom controls from settings.
import { useEffect, useState } from 'preact/hooks';
import { get, post } from '../lib/api.ts';
import { attempt, can, currentProfile, printerState, settings } from '../lib/store.ts';
import type { CustomControl } from '../lib/types.ts';
import { CustomControls } from './CustomControls.tsx';

const STEPS = [0.1, 1, 10, 100];
const command = (what: string, c: string | string[]) =>
  attempt(what, () => post('/api/printer/command', Array.isArray(c) ? { commands: c } : { command: c }));
const printhead = (what: string, body: object) => attempt(what, () => post('/api/printer/printhead', body));
const tool = (what: string, body: object) => attempt(what, () => post('/api/printer/tool', body));

export function ControlTab() {
  const [step, setStep] = useState(10);
  const [amount, setAmount] = useState(String(settings.value?.printer?.defaultExtrusionLength ?? 5));
  const [toolIdx, setToolIdx] = useState(0);
  const [feed, setFeed] = useState(100);
  const [flow, setFlow] = useState(100);
  const [controls, setControls] = useState<CustomControl[]>([]);
  /** The stream URL that failed to load: shown as a message instead of a broken image. */
  const [camDead, setCamDead] = useState<string | null>(null);
  const f = printerState.value.flags;
  const idle = f.operational && !f.printing;
  const tools = currentProfile.value?.extruder?.count ?? 1;

  useEffect(() => {
    get<{ controls: CustomControl[] }>('/api/printer/command/custom').then((r) => setControls(r.controls ?? [])).catch(() => setControls([]));
  }, []);

  const jog = (axis: 'x' | 'y' | 'z', dir: 1 | -1) => printhead(`Jog ${axis.toUpperCase()}`, { command: 'jog', [axis]: dir * step });
  const extrude = async (sign: 1 | -1) => {
    const n = Number(amount);
    if (!Number.isFinite(n) || n <= 0) return;
    if (tools > 1 && !(await tool('Select tool', { command: 'select', tool: `tool${toolIdx}` }))) return;
    await tool(sign > 0 ? 'Extrude' : 'Retract', { command: 'extrude', amount: sign * n });
  };

  const s = settings.value;
  const classic = (s?.plugins?.classicwebcam ?? {}) as { stream?: string; flipH?: boolean; flipV?: boolean; rotate90?: boolean };
  const cam = { ...classic, ...s?.webcam };
  const stream = s?.webcam?.streamUrl || classic.stream;

  return (
    <div class="control">
      {stream && can('WEBCAM') && (camDead === stream
        ? <p class="webcam-dead" role="status" data-testid="webcam-dead">The webcam stream at <code>{stream}</code> does not answer. Check that the camera
            is plugged in and its streamer runs, or correct the URL under Settings → Webcam. <button class="small" onClick={() => setCamDead(null)}>Try again</button></p>
        : <img class="webcam" src={stream} alt="Webcam" onError={() => setCamDead(stream)}
            style={{ transform: `${cam.flipH ? 'scaleX(-1) ' : ''}${cam.flipV ? 'scaleY(-1) ' : ''}${cam.rotate90 ? 'rotate(-90deg)' : ''}` }} />
      )}
      {!f.operational && <p class="muted">Connect to the printer to use the controls.</p>}
      <div class="control-grid">
        <section class="box" aria-label="Jog">
          <h3>Move</h3>
          <div class="jog">
            <div class="jog-xy">
              <span /><button disabled={!idle} onClick={() => jog('y', 1)} aria-label="Y+">Y+</button><span />
              <button disabled={!idle} onClick={() => jog('x', -1)} aria-label="X-">X−</button>
              <button disabled={!idle} onClick={() => printhead('Home X/Y', { command: 'home', axes: ['x', 'y'] })} aria-label="Home X/Y">⌂</button>
              <button disabled={!idle} onClick={() => jog('x', 1)} aria-label="X+">X+</button>
              <span /><button disabled={!idle} onClick={() => jog('y', -1)} aria-label="Y-">Y−</button><span />
            </div>
            <div class="jog-z">
              <button disabled={!idle} onClick={() => jog('z', 1)} aria-label="Z+">Z+</button>
              <button disabled={!idle} onClick={() => printhead('Home Z', { command: 'home', axes: ['z'] })} aria-label="Home Z">⌂</button>
              <button disabled={!idle} onClick={() => jog('z', -1)} aria-label="Z-">Z−</button>
            </div>
          </div>
          <div class="steps" role="radiogroup" aria-label="Step size">
            {STEPS.map((s) => (
              <button key={s} role="radio" aria-checked={s === step} class={s === step ? 'active' : ''} onClick={() => setStep(s)}>{s}</button>
            ))}
            <span class="muted">mm</span>
          </div>
          <div class="buttons">
            <button disabled={!idle} onClick={() => printhead('Home', { command: 'home', axes: ['x', 'y', 'z'] })}>Home all</button>
            <button disabled={!idle} onClick={() => command('Motors off', 'M18')}>Motors off</button>
          </div>
        </section>

        <section class="box" aria-label="Tool">
          <h3>Tool</h3>
          {tools > 1 && (
            <label>Extruder
              <select value={String(toolIdx)} onChange={(e) => setToolIdx(Number(e.currentTarget.value))}>
                {Array.from({ length: tools }, (_, i) => <option key={i} value={String(i)}>Tool {i}</option>)}
              </select>
            </label>
          )}
          <label>Length (mm)<input type="number" min="0" step="0.1" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} /></label>
          <div class="buttons">
            <button disabled={!idle} onClick={() => void extrude(1)}>Extrude</button>
            <button disabled={!idle} onClick={() => void extrude(-1)}>Retract</button>
          </div>
          <h3>Fan</h3>
          <div class="buttons">
            <button disabled={!f.operational} onClick={() => command('Fan on', 'M106 S255')}>Fan on</button>
            <button disabled={!f.operational} onClick={() => command('Fan off', 'M107')}>Fan off</button>
          </div>
        </section>

        <section class="box" aria-label="Rates">
          <h3>Feed rate</h3>
          <div class="rate">
            <input type="range" min="50" max="200" value={feed} onInput={(e) => setFeed(Number(e.currentTarget.value))} aria-label="Feed rate" />
            <span>{feed} %</span>
            <button disabled={!f.operational} onClick={() => printhead('Feed rate', { command: 'feedrate', factor: feed })}>Set</button>
          </div>
          <h3>Flow rate</h3>
          <div class="rate">
            <input type="range" min="75" max="125" value={flow} onInput={(e) => setFlow(Number(e.currentTarget.value))} aria-label="Flow rate" />
            <span>{flow} %</span>
            <button disabled={!f.operational} onClick={() => tool('Flow rate', { command: 'flowrate', factor: flow })}>Set</button>
          </div>
        </section>
      </div>
      {controls.length > 0 && <CustomControls controls={controls} enabled={f.operational} />}
    </div>
  );
}
