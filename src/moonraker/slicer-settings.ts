// The slicer settings a G-code file states about itself that Moonraker's metadata carries and Gantry's analysis does
// not (layer heights, nozzle, filament, first-layer temperatures): PrusaSlicer/Orca/Bambu `; key = value` comments
// at the end (and start) of the file, Cura's `;Layer height:` header. Reads only the file's head and tail.
import { fileChunks } from '../core/file-chunks.ts';

const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 256 * 1024;

async function text(path: string, start: number, end: number): Promise<string> {
  const parts: string[] = [];
  for await (const chunk of fileChunks(path, { start, end })) parts.push(chunk.toString('latin1'));
  return parts.join('');
}

const first = (v: string): string => v.split(/[;,]/)[0].trim();
const num = (v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(first(v));
  return Number.isFinite(n) ? n : undefined;
};

/** Moonraker metadata fields found in the file's comments (only those it states). */
export async function slicerSettings(path: string, size: number): Promise<Record<string, unknown>> {
  const head = await text(path, 0, Math.min(size, HEAD_BYTES));
  const tail = size > HEAD_BYTES ? await text(path, Math.max(HEAD_BYTES, size - TAIL_BYTES), size) : '';
  const kv = new Map<string, string>();
  for (const line of `${head}\n${tail}`.split('\n')) {
    if (line.charCodeAt(0) !== 59 /* ; */) continue;
    const eq = line.indexOf(' = ');
    if (eq > 0 && eq < 80) {
      const key = line.slice(1, eq).trim();
      if (!kv.has(key)) kv.set(key, line.slice(eq + 3).trim());
      continue;
    }
    const colon = line.indexOf(':');
    if (colon > 0 && colon < 40) {
      const key = line.slice(1, colon).trim();
      if (!kv.has(key)) kv.set(key, line.slice(colon + 1).trim());
    }
  }
  const out: Record<string, unknown> = {};
  const set = (k: string, v: unknown) => { if (v !== undefined && v !== '') out[k] = v; };
  set('layer_height', num(kv.get('layer_height') ?? kv.get('Layer height')));
  set('first_layer_height', num(kv.get('first_layer_height') ?? kv.get('initial_layer_print_height')));
  set('nozzle_diameter', num(kv.get('nozzle_diameter')));
  set('first_layer_extr_temp', num(kv.get('first_layer_temperature') ?? kv.get('nozzle_temperature_initial_layer')));
  set('first_layer_bed_temp', num(kv.get('first_layer_bed_temperature') ?? kv.get('bed_temperature_initial_layer_single')));
  set('filament_type', kv.get('filament_type') ? first(kv.get('filament_type')!) : undefined);
  set('filament_name', kv.get('filament_settings_id') ? first(kv.get('filament_settings_id')!).replace(/^"|"$/g, '') : undefined);
  const weight = num(kv.get('total filament used [g]') ?? kv.get('filament used [g]'));
  set('filament_weight_total', weight);
  const layers = num(kv.get('LAYER_COUNT') ?? kv.get('total_layer_count') ?? kv.get('total layer number'));
  set('layer_count', layers);
  return out;
}
