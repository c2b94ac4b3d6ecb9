// Settings section for the printer profile in use: build volume, nozzle and filament, axis speeds and the machine
// limits the analysis' time estimates use (saved through PATCH /api/printerprofiles/<id>).
import { useState } from 'preact/hooks';
import { patch } from '../../lib/api.ts';
import { can, loadProfiles, notify, profiles } from '../../lib/store.ts';
import type { MachineLimits, PrinterProfile } from '../../lib/types.ts';
import { Section, Text } from './fields.tsx';

const AXES = ['x', 'y', 'z', 'e'] as const;
type Axis = (typeof AXES)[number];
type Fields = Record<string, string>;

const str = (v: number | undefined): string => (v === undefined || v === null ? '' : String(v));
/** An empty field states nothing: null clears the value on the server. */
const num = (v: string): number | null => (v.trim() === '' ? null : Number(v));

function fieldsOf(p: PrinterProfile): Fields {
  const l: MachineLimits = p.machineLimits ?? {};
  const f: Fields = {
    name: p.name,
    width: str(p.volume?.width), depth: str(p.volume?.depth), height: str(p.volume?.height),
    nozzle: str(p.extruder?.nozzleDiameter), filament: str(p.extruder?.filamentDiameter),
    printAcceleration: str(l.printAcceleration), retractAcceleration: str(l.retractAcceleration),
    travelAcceleration: str(l.travelAcceleration), junctionDeviation: str(l.junctionDeviation),
  };
  for (const a of AXES) {
    f[`speed.${a}`] = str(p.axes?.[a]?.speed);
    f[`maxFeedrate.${a}`] = str(l.maxFeedrate?.[a]);
    f[`maxAcceleration.${a}`] = str(l.maxAcceleration?.[a]);
  }
  return f;
}

function patchOf(f: Fields): Record<string, unknown> {
  const perAxis = (prefix: string): Record<Axis, number | null> =>
    Object.fromEntries(AXES.map((a) => [a, num(f[`${prefix}.${a}`])])) as Record<Axis, number | null>;
  return {
    name: f.name,
    volume: { width: Number(f.width), depth: Number(f.depth), height: Number(f.height) },
    extruder: { nozzleDiameter: Number(f.nozzle), filamentDiameter: num(f.filament) },
    axes: Object.fromEntries(AXES.map((a) => [a, { speed: Number(f[`speed.${a}`]) }])),
    machineLimits: {
      maxFeedrate: perAxis('maxFeedrate'), maxAcceleration: perAxis('maxAcceleration'),
      printAcceleration: num(f.printAcceleration), retractAcceleration: num(f.retractAcceleration),
      travelAcceleration: num(f.travelAcceleration), junctionDeviation: num(f.junctionDeviation),
    },
  };
}

/**
 * The bounds of a form field, as the server's profile check has them: a build volume above 0 and below 10 m, a
 * filament below 10 mm, machine limits above 0 (junction deviation may be 0), jog speeds whole mm/min. A nozzle is
 * given sensible bounds (0.05–5 mm), which the server does not check.
 */
function boundsOf(key: string): { min?: number; max?: number; required?: boolean; step?: string } {
  if (key === 'name') return { required: true };
  if (['width', 'depth', 'height'].includes(key)) return { min: 0.1, max: 9999, required: true };
  if (key === 'nozzle') return { min: 0.05, max: 5, required: true };
  if (key === 'filament') return { min: 0.1, max: 9.99 };
  if (key.startsWith('speed.')) return { min: 1, max: 999999, required: true, step: '1' };
  if (key === 'junctionDeviation') return { min: 0, max: 999999 };
  return { min: 0.001, max: 999999 };
}

function ProfileForm({ profile }: { profile: PrinterProfile }) {
  const [f, setF] = useState<Fields>(() => fieldsOf(profile));
  const ro = !can('SETTINGS');
  const field = (label: string, key: string, placeholder?: string) => {
    const b = boundsOf(key);
    return <Text label={label} type={key === 'name' ? 'text' : 'number'} name={`profile.${key}`} value={f[key]} disabled={ro} placeholder={placeholder}
      min={b.min} max={b.max} required={b.required} step={b.step} onChange={(v) => setF({ ...f, [key]: v })} />;
  };
  // The server answers only "profile is invalid" (OctoPrint's wording, which clients match): each field is checked
  // here first, by the bounds the server's profile check applies, so the field at fault is the one marked.
  const save = async () => {
    await patch(`/api/printerprofiles/${encodeURIComponent(profile.id)}`, { profile: patchOf(f) });
    notify('Printer profile saved');
    await loadProfiles();
  };
  return (
    <Section title="Printer profile" disabled={ro} onSave={save}>
      {field('Profile name', 'name')}
      <fieldset class="grid"><legend>Build volume (mm)</legend>{field('Width', 'width')}{field('Depth', 'depth')}{field('Height', 'height')}</fieldset>
      <fieldset class="grid"><legend>Extruder (mm)</legend>
        {field('Nozzle diameter', 'nozzle')}
        {field('Filament diameter', 'filament', 'from the file, else 1.75')}
      </fieldset>
      <fieldset class="grid"><legend>Axis speeds for jogging (mm/min)</legend>{AXES.map((a) => field(a.toUpperCase(), `speed.${a}`))}</fieldset>
      <fieldset class="grid"><legend>Machine limits for time estimates (empty: the firmware's or Marlin's; a file's own win)</legend>
        {AXES.map((a) => field(`Max feedrate ${a.toUpperCase()} (mm/s)`, `maxFeedrate.${a}`))}
        {AXES.map((a) => field(`Max acceleration ${a.toUpperCase()} (mm/s²)`, `maxAcceleration.${a}`))}
        {field('Print acceleration (mm/s²)', 'printAcceleration')}
        {field('Retract acceleration (mm/s²)', 'retractAcceleration')}
        {field('Travel acceleration (mm/s²)', 'travelAcceleration')}
        {field('Junction deviation (mm, 0: classic jerk)', 'junctionDeviation')}
      </fieldset>
    </Section>
  );
}

export function ProfileSection() {
  const all = Object.values(profiles.value);
  const profile = all.find((p) => p.current) ?? all.find((p) => p.default);
  if (!profile) return <p class="muted">No printer profile is available.</p>;
  // A fresh form whenever another profile comes into use or the stored one changed.
  return <ProfileForm key={`${profile.id}:${JSON.stringify(profile)}`} profile={profile} />;
}
