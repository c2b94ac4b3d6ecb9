// M114 / M154 position report parser.
// Sample lines:
//   Marlin   X:10.00 Y:20.00 Z:0.30 E:0.00 Count X:800 Y:1600 Z:240
//   Delta    X:0.00 Y:0.00 Z:250.00 E:0.00 Count A:25000 B:25000 C:25000
//   RRF      X:0.000 Y:0.000 Z:0.000 E:0.000 E0:0.0 Count 0 0 0 Machine 0.000 0.000 0.000 Bed comp 0.000
//   Klipper  X:0.000 Y:0.000 Z:0.000 E:0.000
//   Multi-E  X:1.00 Y:2.00 Z:3.00 E0:4.00 E1:5.00

export interface ParsedPosition {
  x: number;
  y: number;
  z: number;
  /** Single `E:` value, or null when only per-extruder values were reported. */
  e: number | null;
  /** `E0:`, `E1:`... values in order. */
  es: number[];
}

export function isPositionLine(line: string): boolean {
  return line.includes('X:') && line.includes('Y:') && line.includes('Z:');
}

// A number has one way to be read (`1.5`, `.5`, `15`; not `1.`): as `\d*\.?\d+` a run of digits splits between the
// two quantifiers in every way, and a 16 K-digit X not followed by Y: took seconds.
const NUM = String.raw`[-+]?(?:\d+(?:\.\d+)?|\.\d+)`;
const POS = new RegExp(String.raw`X:\s*(${NUM})\s*Y:\s*(${NUM})\s*Z:\s*(${NUM})\s*(?:E:\s*(${NUM})|((?:E\d+:\s*${NUM}\s*)+))`);
const PER_E = new RegExp(String.raw`E(\d+):\s*(${NUM})`, 'g');

export function parsePosition(line: string): ParsedPosition | null {
  const m = POS.exec(line);
  if (!m) return null;
  const es: number[] = [];
  if (m[5]) {
    PER_E.lastIndex = 0;
    let e: RegExpExecArray | null;
    while ((e = PER_E.exec(m[5])) !== null) es[Number(e[1])] = Number(e[2]);
  }
  return { x: Number(m[1]), y: Number(m[2]), z: Number(m[3]), e: m[4] !== undefined ? Number(m[4]) : null, es };
}
