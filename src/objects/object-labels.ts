// Reads a G-code file's object labels line by line: every common slicer style, numbered 0, 1, 2, … by first
// appearance, as the Cancelobject plugin numbers them (docs/reference/plugins.md §2.2, §2.6).

/** What the labels read so far left (to go on reading elsewhere: a link thread, a resumed print). */
export interface LabelsState {
  names: string[];
  ids: Array<[string, number]>;
  m486: Array<[number, number]>;
  m486Naming: number;
}

/**
 * Whether a comment-only line can be a label (the comment styles; M486 and EXCLUDE_OBJECT are commands). For callers
 * that pass comments on only when they matter.
 */
export function isLabelComment(line: string): boolean {
  const t = line.trim();
  return PRINTING.test(t) || STOP.test(t) || MESH.test(t);
}

/** What a line says about objects: an object starts (or an M486 header names one), or the current one ends. */
export type LabelEvent = { kind: 'start'; id: number; name: string } | { kind: 'end' } | { kind: 'define'; id: number; name: string };

const PRINTING = /^;\s*printing object\s(.+)$/i;
const STOP = /^;\s*stop printing object\b/i;
const MESH = /^;MESH:(.*)$/;
const M486 = /^M486\s(.*)$/i;
const KLIPPER = /^EXCLUDE_OBJECT_(DEFINE|START|END)\b(.*)$/i;
const KLIPPER_NAME = /\bNAME=('[^']*'|"[^"]*"|\S+)/i;

export class ObjectLabels {
  /** Names by id, in order of first appearance. */
  readonly names: string[] = [];
  private readonly ids = new Map<string, number>();
  /** M486: index → id, and the index whose name the next `M486 A…` line gives. */
  private readonly m486 = new Map<number, number>();
  private m486Naming = -1;

  constructor(state?: LabelsState) {
    if (state === undefined) return;
    this.names.push(...state.names);
    for (const [k, v] of state.ids) this.ids.set(k, v);
    for (const [k, v] of state.m486) this.m486.set(k, v);
    this.m486Naming = state.m486Naming;
  }

  /** The state to go on from (see LabelsState). */
  snapshot(): LabelsState {
    return { names: [...this.names], ids: [...this.ids], m486: [...this.m486], m486Naming: this.m486Naming };
  }

  /** The file's `M486 S` index of an object labelled by M486, else undefined (`M486 P` takes the index). */
  m486Index(id: number): number | undefined {
    for (const [index, v] of this.m486) if (v === id) return index;
    return undefined;
  }

  private idOf(key: string, name: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.names.length;
      this.ids.set(key, id);
      this.names.push(name);
    }
    return id;
  }

  /** The line's label event, or null (most lines: one character test). */
  feed(raw: string): LabelEvent | null {
    const c0 = raw.charCodeAt(0);
    // ';' 'M' 'm' 'E' 'e' or leading white space
    if (c0 !== 59 && c0 !== 77 && c0 !== 109 && c0 !== 69 && c0 !== 101 && c0 !== 32 && c0 !== 9) return null;
    const line = raw.trim();
    if (line.charCodeAt(0) === 59) {
      let m = PRINTING.exec(line);
      if (m !== null) {
        const name = m[1].trim();
        return { kind: 'start', id: this.idOf(`P:${name}`, name), name };
      }
      if (STOP.test(line)) return { kind: 'end' };
      m = MESH.exec(line);
      if (m !== null) {
        const name = m[1].trim();
        // Cura's NONMESH is what lies between meshes (travel, skirt, support).
        if (name === 'NONMESH' || name === '') return { kind: 'end' };
        return { kind: 'start', id: this.idOf(`C:${name}`, name), name };
      }
      return null;
    }
    const semi = line.indexOf(';');
    const code = semi === -1 ? line : line.slice(0, semi).trim();
    let m = M486.exec(code);
    if (m !== null) return this.m486Line(m[1].trim());
    m = KLIPPER.exec(code);
    if (m !== null) {
      const kind = m[1].toUpperCase();
      if (kind === 'END') return { kind: 'end' };
      const nm = KLIPPER_NAME.exec(m[2]);
      if (nm === null) return null;
      const name = nm[1].replace(/^['"]|['"]$/g, '');
      const id = this.idOf(`K:${name.toUpperCase()}`, name);
      return kind === 'START' ? { kind: 'start', id, name } : { kind: 'define', id, name };
    }
    return null;
  }

  private m486Line(rest: string): LabelEvent | null {
    const s = /^S(-?\d+)/i.exec(rest);
    if (s !== null) {
      const index = Number(s[1]);
      if (index < 0) {
        return { kind: 'end' };
      }
      // RepRapFirmware names it on the same line: M486 S0 A"cube"
      const a = /\bA("[^"]*"|\S+)/.exec(rest.slice(s[0].length));
      let id = this.m486.get(index);
      if (id === undefined) {
        id = this.idOf(`M:${index}`, a !== null ? a[1].replace(/^"|"$/g, '') : `object ${index}`);
        this.m486.set(index, id);
        this.m486Naming = a === null ? index : -1;
        return { kind: 'start', id, name: this.names[id] };
      }
      this.m486Naming = -1;
      return { kind: 'start', id, name: this.names[id] };
    }
    if (/^A/i.test(rest) && this.m486Naming >= 0) {
      // The plugin names it with everything after `M486 `, the leading A included (plugins.md §2.1).
      const id = this.m486.get(this.m486Naming)!;
      this.names[id] = rest;
      this.m486Naming = -1;
      return { kind: 'define', id, name: rest };
    }
    return null;
  }
}
