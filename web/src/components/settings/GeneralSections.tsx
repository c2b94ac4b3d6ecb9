// Settings sections for the printer's appearance and features, serial connection, temperatures, GCODE scripts, webcam.
import { useState } from 'preact/hooks';
import { can, settings } from '../../lib/store.ts';
import { postSettings } from './SettingsTab.tsx';
import { Check, FieldErrors, Section, Text, useFieldError } from './fields.tsx';

const COLORS = ['default', 'red', 'orange', 'yellow', 'green', 'blue', 'violet'];

export function PrinterSection() {
  const s = settings.value!;
  const [name, setName] = useState(s.appearance?.name ?? '');
  const [color, setColor] = useState(s.appearance?.color ?? 'default');
  const [cancelConfirm, setCancelConfirm] = useState(s.feature?.printCancelConfirmation ?? true);
  const [graph, setGraph] = useState(s.feature?.temperatureGraph ?? true);
  const [sd, setSd] = useState(s.feature?.sdSupport ?? true);
  const ro = !can('SETTINGS');
  return (
    <Section title="Printer" disabled={ro} onSave={() => postSettings({
      appearance: { name, color },
      feature: { printCancelConfirmation: cancelConfirm, temperatureGraph: graph, sdSupport: sd },
    })}>
      <Text label="Printer name" name="appearance.name" value={name} onChange={setName} disabled={ro} placeholder="e.g. Workshop MK3" />
      <label>Colour
        <select value={color} disabled={ro} onChange={(e) => setColor(e.currentTarget.value)}>
          {COLORS.map((c) => <option key={c} value={c}>{c}</option>)}
        </select>
      </label>
      <Check label="Ask before cancelling a print" value={cancelConfirm} onChange={setCancelConfirm} disabled={ro} />
      <Check label="Show the temperature graph" value={graph} onChange={setGraph} disabled={ro} />
      <Check label="SD card support" value={sd} onChange={setSd} disabled={ro} />
    </Section>
  );
}

export function SerialSection() {
  const s = settings.value!.serial ?? {};
  const [port, setPort] = useState(String(s.port ?? ''));
  const [baud, setBaud] = useState(String(s.baudrate ?? ''));
  const [autoconnect, setAutoconnect] = useState(!!s.autoconnect);
  const [timeoutConnection, setTC] = useState(String(s.timeoutConnection ?? 10));
  const [timeoutCommunication, setTCom] = useState(String(s.timeoutCommunication ?? 30));
  const [additionalPorts, setAP] = useState(((s.additionalPorts as string[] | undefined) ?? []).join('\n'));
  const [log, setLog] = useState(!!s.log);
  const ro = !can('SETTINGS');
  return (
    <Section title="Serial connection" disabled={ro} onSave={() => postSettings({
      serial: {
        port: port || null, baudrate: baud ? Number(baud) : null, autoconnect, log,
        timeoutConnection: Number(timeoutConnection), timeoutCommunication: Number(timeoutCommunication),
        additionalPorts: additionalPorts.split('\n').map((x) => x.trim()).filter(Boolean),
      },
    })}>
      <label>Default port
        <select value={port} disabled={ro} onChange={(e) => setPort(e.currentTarget.value)}>
          <option value="">AUTO</option>
          {(s.portOptions ?? []).map((p) => <option key={p} value={p}>{p}</option>)}
        </select>
      </label>
      <label>Default baud rate
        <select value={baud} disabled={ro} onChange={(e) => setBaud(e.currentTarget.value)}>
          <option value="">AUTO</option>
          {(s.baudrateOptions ?? []).map((b) => <option key={b} value={String(b)}>{b}</option>)}
        </select>
      </label>
      <Check label="Connect automatically on server start" value={autoconnect} onChange={setAutoconnect} disabled={ro} />
      <Text label="Connection timeout (s)" type="number" name="serial.timeoutConnection" value={timeoutConnection} onChange={setTC} disabled={ro} />
      <Text label="Communication timeout (s)" type="number" name="serial.timeoutCommunication" value={timeoutCommunication} onChange={setTCom} disabled={ro} />
      <label>Additional serial ports (globs, one per line)
        <textarea rows={3} value={additionalPorts} disabled={ro} onInput={(e) => setAP(e.currentTarget.value)} />
      </label>
      <Check label="Log serial traffic to serial.log" value={log} onChange={setLog} disabled={ro} />
    </Section>
  );
}

type PresetDraft = { name: string; extruder: string; bed: string };

/** What only the form knows: an empty field is an error, never a 0. The ranges are the server's to judge (its 400). */
function presetErrors(drafts: PresetDraft[]): Record<string, string> {
  const errors: Record<string, string> = {};
  drafts.forEach((d, i) => {
    if (!d.name.trim()) errors[`temperature.profiles.${i}.name`] = 'Give the preset a name.';
    for (const k of ['extruder', 'bed'] as const) if (d[k].trim() === '') errors[`temperature.profiles.${i}.${k}`] = 'Enter a temperature.';
  });
  return errors;
}

/** One cell of the presets table: its error (the form's, by the settings path) under the input. */
function PresetCell({ name, label, value, type, disabled, onInput }: {
  name: string; label: string; value: string; type: 'number' | 'text'; disabled: boolean; onInput(v: string): void;
}) {
  const err = useFieldError(name);
  const id = `preset-${name.replace(/\./g, '-')}`;
  return (
    <td>
      <input type={type as 'text'} name={name} value={value} disabled={disabled} aria-label={label} aria-invalid={err ? true : undefined}
        aria-describedby={err ? id : undefined} onInput={(e) => onInput(e.currentTarget.value)} />
      {err && <span class="field-error" id={id} role="alert">{err}</span>}
    </td>
  );
}

export function TemperatureSection() {
  const t = settings.value!.temperature ?? {};
  const [drafts, setDrafts] = useState<PresetDraft[]>((t.profiles ?? []).map((p) => ({ name: p.name, extruder: String(p.extruder), bed: String(p.bed) })));
  const [cutoff, setCutoff] = useState(String(t.cutoff ?? 30));
  const ro = !can('SETTINGS');
  const update = (i: number, key: keyof PresetDraft, v: string) => setDrafts(drafts.map((p, j) => (j === i ? { ...p, [key]: v } : p)));
  const save = async () => {
    const local = presetErrors(drafts);
    if (Object.keys(local).length) throw new FieldErrors(local);
    const profiles = drafts.map((d) => ({ name: d.name, extruder: Number(d.extruder), bed: Number(d.bed) }));
    await postSettings({ temperature: { profiles, cutoff: Number(cutoff) } });
  };
  const cell = (i: number, key: keyof PresetDraft, label: string, type: 'number' | 'text' = 'number') => (
    <PresetCell name={`temperature.profiles.${i}.${key}`} label={label} type={type} value={drafts[i][key]} disabled={ro}
      onInput={(v) => update(i, key, v)} />
  );
  return (
    <Section title="Temperatures" disabled={ro} onSave={save}>
      <table class="profiles">
        <thead><tr><th>Name</th><th>Extruder °C</th><th>Bed °C</th><th /></tr></thead>
        <tbody>
          {drafts.map((_, i) => (
            <tr key={i}>
              {cell(i, 'name', 'Profile name', 'text')}
              {cell(i, 'extruder', 'Extruder')}
              {cell(i, 'bed', 'Bed')}
              <td>{!ro && <button type="button" class="small danger" onClick={() => setDrafts(drafts.filter((_, j) => j !== i))}>Remove</button>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!ro && <div class="buttons"><button type="button" onClick={() => setDrafts([...drafts, { name: 'New', extruder: '200', bed: '60' }])}>Add profile</button></div>}
      <Text label="Graph history (minutes)" type="number" name="temperature.cutoff" value={cutoff} onChange={setCutoff} disabled={ro} />
    </Section>
  );
}

const SCRIPT_NAMES = ['afterPrinterConnected', 'beforePrinterDisconnected', 'beforePrintStarted', 'afterPrintCancelled',
  'afterPrintDone', 'afterPrintPaused', 'beforePrintResumed', 'beforeToolChange', 'afterToolChange'];

export function ScriptsSection() {
  const stored = settings.value!.scripts?.gcode ?? {};
  const names = [...new Set([...SCRIPT_NAMES, ...Object.keys(stored)])];
  const [name, setName] = useState(names[0]);
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const text = drafts[name] ?? stored[name] ?? '';
  const ro = !can('SETTINGS');
  return (
    <Section title="GCODE scripts" disabled={ro} onSave={() => postSettings({ scripts: { gcode: { [name]: text } } })}>
      <label>Script
        <select value={name} onChange={(e) => setName(e.currentTarget.value)}>
          {names.map((n) => <option key={n} value={n}>{n}</option>)}
        </select>
      </label>
      <label>Content (sent as G-code; templates may use the printer profile and last values)
        <textarea class="code" rows={12} value={text} disabled={ro} onInput={(e) => setDrafts({ ...drafts, [name]: e.currentTarget.value })} />
      </label>
    </Section>
  );
}

export function WebcamSection() {
  const s = settings.value!;
  // GET answers the effective URLs in the legacy `webcam` keys. OctoPrint 1.9 stores them in the classic webcam
  // plugin and ignores writes to the legacy keys; Gantry maps the legacy keys. Writing both works with either.
  const classic = (s.plugins?.classicwebcam ?? {}) as { stream?: string; snapshot?: string; flipH?: boolean; flipV?: boolean; rotate90?: boolean };
  const [stream, setStream] = useState(s.webcam?.streamUrl ?? classic.stream ?? '');
  const [snapshot, setSnapshot] = useState(s.webcam?.snapshotUrl ?? classic.snapshot ?? '');
  const [flipH, setFlipH] = useState(s.webcam?.flipH ?? classic.flipH ?? false);
  const [flipV, setFlipV] = useState(s.webcam?.flipV ?? classic.flipV ?? false);
  const [rotate, setRotate] = useState(s.webcam?.rotate90 ?? classic.rotate90 ?? false);
  const ro = !can('SETTINGS');
  return (
    <Section title="Webcam" disabled={ro} onSave={() => postSettings({
      webcam: { streamUrl: stream, snapshotUrl: snapshot, flipH, flipV, rotate90: rotate },
      plugins: { classicwebcam: { stream, snapshot, flipH, flipV, rotate90: rotate } },
    })}>
      <Text label="Stream URL" name="webcam.streamUrl" value={stream} onChange={setStream} disabled={ro} placeholder="/webcam/?action=stream" />
      <Text label="Snapshot URL" name="webcam.snapshotUrl" value={snapshot} onChange={setSnapshot} disabled={ro} placeholder="http://127.0.0.1:8080/?action=snapshot" />
      <Check label="Flip horizontally" value={flipH} onChange={setFlipH} disabled={ro} />
      <Check label="Flip vertically" value={flipV} onChange={setFlipV} disabled={ro} />
      <Check label="Rotate 90°" value={rotate} onChange={setRotate} disabled={ro} />
      {stream && <img class="webcam" src={stream} alt="Webcam stream" style={{ transform: `${flipH ? 'scaleX(-1) ' : ''}${flipV ? 'scaleY(-1) ' : ''}${rotate ? 'rotate(-90deg)' : ''}` }} />}
    </Section>
  );
}
