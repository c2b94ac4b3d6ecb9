// Extension tree: which file names the host stores and how it types them (`machinecode`/`gcode`, …). Other services
// (slicing) register more types here; everything else is refused with 415 and never listed.

export interface FileType {
  /** e.g. ['machinecode', 'gcode'] or ['model', 'stl']. */
  typePath: string[];
  extensions: string[];
}

const types: FileType[] = [{ typePath: ['machinecode', 'gcode'], extensions: ['gcode', 'gco', 'g'] }];

/** Adds a type (idempotent per typePath); the slicing service registers its model formats this way. */
export function registerFileType(type: FileType): void {
  const key = type.typePath.join('/');
  const existing = types.find((t) => t.typePath.join('/') === key);
  if (existing) {
    for (const e of type.extensions) if (!existing.extensions.includes(e.toLowerCase())) existing.extensions.push(e.toLowerCase());
  } else {
    types.push({ typePath: [...type.typePath], extensions: type.extensions.map((e) => e.toLowerCase()) });
  }
}

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}

/** The type path of a file name, or undefined when the extension is unknown. */
export function typePathOf(name: string): string[] | undefined {
  const ext = extensionOf(name);
  if (!ext) return undefined;
  for (const t of types) if (t.extensions.includes(ext)) return t.typePath;
  return undefined;
}

export const isKnownFile = (name: string): boolean => typePathOf(name) !== undefined;
export const isMachineCode = (name: string): boolean => typePathOf(name)?.[0] === 'machinecode';
export const isGcode = (name: string): boolean => typePathOf(name)?.[1] === 'gcode';

/** Whether a file of this name passes a listing filter (`machinecode`, `gcode`, `model`, `stl`…). */
export function matchesFilter(name: string, filter: string): boolean {
  const tp = typePathOf(name);
  return tp !== undefined && tp.includes(filter);
}
