// The machine state a G-code file leaves behind up to a byte offset (Z, layer, E, feedrate, fan, tool, targets),
// read from the file itself, incrementally, so the streaming path never pays for it.
import { open } from 'node:fs/promises';

export interface MachineState {
  /** Byte offset scanned up to and the number of whole lines before it. */
  filepos: number;
  line: number;
  x: number | null;
  y: number | null;
  z: number | null;
  /** E in the file's coordinates (absolute value the firmware had, after any G92 E). */
  e: number;
  f: number | null;
  relativeE: boolean;
  relativeXYZ: boolean;
  tool: number;
  /** Part cooling fan 0–255. */
  fan: number;
  /** Targets last set by the file (M104/M109 per tool, M140/M190, M141/M191). */
  tools: Record<string, number>;
  bed: number | null;
  chamber: number | null;
  /** 0-based layer: raised by each new highest Z that is then extruded at. */
  layer: number;
  layerZ: number | null;
  /** Byte offset and line where the current layer's Z move was read. */
  layerStart: { filepos: number; line: number } | null;
}

export function initialState(): MachineState {
  return {
    filepos: 0, line: 0, x: null, y: null, z: null, e: 0, f: null, relativeE: false, relativeXYZ: false, tool: 0, fan: 0,
    tools: {}, bed: null, chamber: null, layer: -1, layerZ: null, layerStart: null,
  };
}

const WORD = /([A-Z])\s*(-?\d*\.?\d+)/g;

function words(cmd: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const w of cmd.matchAll(WORD)) if (!m.has(w[1])) m.set(w[1], Number(w[2]));
  return m;
}

/** Applies one line (with its start offset) to the state. Mutates `s`. */
export function applyLine(s: MachineState, raw: string, lineStart: number): void {
  const semi = raw.indexOf(';');
  const cmd = (semi === -1 ? raw : raw.slice(0, semi)).trim().toUpperCase();
  if (!cmd) return;
  const sp = cmd.search(/[\s]/);
  const code = (sp === -1 ? cmd : cmd.slice(0, sp)).replace(/^N\d+\s*/, '');
  if (code[0] === 'T' && /^T\d+$/.test(code)) { s.tool = Number(code.slice(1)); return; }
  const w = words(sp === -1 ? '' : cmd.slice(sp));
  switch (code) {
    case 'G0': case 'G1': case 'G2': case 'G3': {
      const axis = (k: 'x' | 'y' | 'z', v: number | undefined) => {
        if (v === undefined) return;
        s[k] = s.relativeXYZ && s[k] !== null ? (s[k] as number) + v : v;
      };
      const zBefore = s.z;
      axis('x', w.get('X'));
      axis('y', w.get('Y'));
      axis('z', w.get('Z'));
      if (s.z !== zBefore && s.z !== null && (s.layerZ === null || s.z > s.layerZ)) s.layerStart = { filepos: lineStart, line: s.line };
      const f = w.get('F');
      if (f !== undefined) s.f = f;
      const e = w.get('E');
      if (e !== undefined) {
        const delta = s.relativeE ? e : e - s.e;
        s.e = s.relativeE ? s.e + e : e;
        if (delta > 0 && s.z !== null && (s.layerZ === null || s.z > s.layerZ + 1e-6)) {
          s.layer++;
          s.layerZ = s.z;
        }
      }
      return;
    }
    case 'G28': s.x = s.y = s.z = null; if (w.size === 0 || w.has('Z')) s.z = 0; return;
    case 'G90': s.relativeXYZ = false; s.relativeE = false; return;
    case 'G91': s.relativeXYZ = true; s.relativeE = true; return;
    case 'M82': s.relativeE = false; return;
    case 'M83': s.relativeE = true; return;
    case 'G92': {
      const e = w.get('E');
      if (e !== undefined) s.e = e;
      const z = w.get('Z');
      if (z !== undefined) s.z = z;
      return;
    }
    case 'M104': case 'M109': {
      const t = w.get('S') ?? w.get('R');
      if (t !== undefined) s.tools[`tool${w.get('T') ?? s.tool}`] = t;
      return;
    }
    case 'M140': case 'M190': { const t = w.get('S') ?? w.get('R'); if (t !== undefined) s.bed = t; return; }
    case 'M141': case 'M191': { const t = w.get('S') ?? w.get('R'); if (t !== undefined) s.chamber = t; return; }
    case 'M106': s.fan = Math.max(0, Math.min(255, w.get('S') ?? 255)); return;
    case 'M107': s.fan = 0; return;
    default:
  }
}

/**
 * Advances `s` from its offset to `to` by reading the file (64 KiB chunks). Only whole lines ending before `to` are
 * applied; `to` is always a line end in practice (the stream's offsets are).
 */
export async function scanTo(path: string, s: MachineState, to: number, until?: (s: MachineState) => boolean): Promise<MachineState> {
  if (to <= s.filepos) return s;
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(64 * 1024);
    let carry = '';
    let carryStart = s.filepos;
    let pos = s.filepos;
    while (pos < to) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, to - pos), pos);
      if (bytesRead === 0) break;
      let start = 0;
      for (let i = 0; i < bytesRead; i++) {
        if (buf[i] !== 10) continue;
        const text = carry + buf.toString('utf8', start, i);
        applyLine(s, text.endsWith('\r') ? text.slice(0, -1) : text, carryStart);
        s.line++;
        carry = '';
        start = i + 1;
        carryStart = pos + start;
        s.filepos = carryStart;
        if (until?.(s)) return s;
      }
      if (start < bytesRead) carry += buf.toString('utf8', start, bytesRead);
      pos += bytesRead;
    }
    return s;
  } finally {
    await fh.close();
  }
}

/** Byte offset of the start of 1-based `line` (null past the end). */
export async function offsetOfLine(path: string, line: number): Promise<number | null> {
  if (line <= 1) return 0;
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(64 * 1024);
    let pos = 0;
    let seen = 1;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) return null;
      for (let i = 0; i < bytesRead; i++) {
        if (buf[i] === 10 && ++seen === line) return pos + i + 1;
      }
      pos += bytesRead;
    }
  } finally {
    await fh.close();
  }
}

/** Where layer `layer` (0-based) begins (its Z move), scanning from the start; null if the file has no such layer. */
export async function offsetOfLayer(path: string, layer: number, size: number): Promise<number | null> {
  const s = await scanTo(path, initialState(), size, (st) => st.layer >= layer);
  return s.layer === layer ? s.layerStart?.filepos ?? null : null;
}
