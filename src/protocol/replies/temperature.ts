// Temperature report parser: any number of tools, bed, chamber and custom sensors, in every firmware's form.
// Sample lines (one per family):
//   Marlin M105    ok T:21.56 /0.00 B:21.30 /0.00 @:0 B@:0
//   Marlin M155     T:210.01 /210.00 B:60.02 /60.00 @:64 B@:30
//   Marlin 2 tools ok T:200.0 /200.0 T0:200.0 /200.0 T1:25.0 /0.0 B:60.0 /60.0 @:70 B@:20 @0:70 @1:0
//   Marlin M109     T:199.8 /200.0 B:60.1 /60.0 @:40 B@:0 W:3
//   Prusa MK3      ok T:241.5 /240.0 B:76.5 /85.0 T0:241.5 /240.0 @:26 B@:127 P:0.0 A:38.5
//   Smoothie       ok T:21.0 /0.0 @0 T1:22.0 /0.0 @0 B:21.5 /0.0 @0
//   Klipper        ok B:23.0 /0.0 T0:22.9 /0.0
//   RRF            ok T:25.1 /0.0 B:24.8 /0.0
//   Repetier       T:20.13 /0 B:20.00 /0 B@:0 @:0      and   TargetExtr0:200 / TargetBed:60
//   Chamber        ok T:20.0 /0.0 B:20.0 /0.0 C:40.0 /45.0

export interface RawReading {
  actual: number;
  target: number | null;
}

/** True for lines carrying a temperature report (checked after the position check, see isPositionLine). */
export function isTemperatureLine(line: string): boolean {
  if (line.startsWith('T:') || line.includes(' T:') || line.startsWith('T0:') || line.includes(' T0:')) return true;
  return (line.startsWith('B:') || line.includes(' B:')) && !line.includes('A:');
}

const SENSOR = /(?:^|\s)([A-Za-z_][A-Za-z0-9_]*):\s*([-+]?\d*\.?\d+)(?:\s*\/\s*([-+]?\d*\.?\d+))?/g;

/** Every `key:actual[ /target]` pair; the first occurrence of a key wins. Keys as reported (T, T0, B, C, P...). */
export function parseTemperatureLine(line: string): Map<string, RawReading> {
  const out = new Map<string, RawReading>();
  SENSOR.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = SENSOR.exec(line)) !== null) {
    const key = m[1];
    if (key === 'ok' || out.has(key)) continue;
    const actual = Number(m[2]);
    if (!Number.isFinite(actual)) continue;
    const target = m[3] === undefined ? null : Number(m[3]);
    out.set(key, { actual, target: target !== null && Number.isFinite(target) ? target : null });
  }
  return out;
}

export interface CanonicalTemperatures {
  tools: Map<number, RawReading>;
  bed?: RawReading;
  chamber?: RawReading;
  custom: Map<string, RawReading>;
}

/**
 * Maps reported keys to tools/bed/chamber: a lone `T` is the current tool; `T` next to `T0` is a duplicate;
 * `T` next to `T1..` without `T0` is the first extruder (Smoothieware).
 */
export function canonicalTemperatures(raw: Map<string, RawReading>, currentTool: number): CanonicalTemperatures {
  const tools = new Map<number, RawReading>();
  const custom = new Map<string, RawReading>();
  let bed: RawReading | undefined;
  let chamber: RawReading | undefined;
  let plainT: RawReading | undefined;
  for (const [key, value] of raw) {
    if (key === 'T') plainT = value;
    else if (key === 'B') bed = value;
    else if (key === 'C') chamber = value;
    else if (key.length > 1 && key[0] === 'T' && /^T\d+$/.test(key)) tools.set(Number(key.slice(1)), value);
    else custom.set(key, value);
  }
  if (plainT) {
    if (tools.size === 0) tools.set(currentTool, plainT);
    else if (tools.has(0)) {
      if (!tools.has(currentTool)) tools.set(currentTool, plainT);
    } else tools.set(0, plainT);
  }
  return { tools, bed, chamber, custom };
}

/** Repetier's target lines: `TargetExtr0:200` → {tool: 0, target: 200}; `TargetBed:60` → {tool: 'bed', ...}. */
export function parseRepetierTarget(line: string): { heater: number | 'bed'; target: number } | null {
  if (line.startsWith('TargetBed:')) {
    const t = Number(line.slice(10).trim());
    return Number.isFinite(t) ? { heater: 'bed', target: t } : null;
  }
  if (line.startsWith('TargetExtr')) {
    const colon = line.indexOf(':');
    const tool = Number(line.slice(10, colon));
    const t = Number(line.slice(colon + 1).trim());
    return colon > 10 && Number.isFinite(tool) && Number.isFinite(t) ? { heater: tool, target: t } : null;
  }
  return null;
}
