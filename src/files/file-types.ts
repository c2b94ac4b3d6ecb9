// Extension tree: which file names the host stores and how it types them (`machinecode`/`gcode`, `model`/`stl`, …).
// G-code is always known; a FileTypes instance adds what other services register (the slicers' model formats), and
// everything else is refused with 415 and never listed.

export interface FileType {
  /** e.g. ['machinecode', 'gcode'] or ['model', 'stl']. */
  typePath: string[];
  extensions: string[];
}

const GCODE: FileType = { typePath: ['machinecode', 'gcode'], extensions: ['gcode', 'gco', 'g'] };

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}

/** The type path of a G-code file name (the only thing a printer prints), or undefined. */
export function machineCodeTypePath(name: string): string[] | undefined {
  return GCODE.extensions.includes(extensionOf(name)) ? GCODE.typePath : undefined;
}

export const isMachineCode = (name: string): boolean => machineCodeTypePath(name) !== undefined;
export const isGcode = isMachineCode;

/** The file types one server accepts: G-code plus the registered ones. */
export class FileTypes {
  private readonly types: FileType[] = [{ typePath: [...GCODE.typePath], extensions: [...GCODE.extensions] }];

  /** Adds a type (idempotent per typePath); the slicing service's model formats arrive this way. */
  register(type: FileType): void {
    const key = type.typePath.join('/');
    const existing = this.types.find((t) => t.typePath.join('/') === key);
    if (existing) {
      for (const e of type.extensions) if (!existing.extensions.includes(e.toLowerCase())) existing.extensions.push(e.toLowerCase());
    } else {
      this.types.push({ typePath: [...type.typePath], extensions: type.extensions.map((e) => e.toLowerCase()) });
    }
  }

  /** The type path of a file name, or undefined when the extension is unknown. */
  typePathOf(name: string): string[] | undefined {
    const ext = extensionOf(name);
    if (!ext) return undefined;
    for (const t of this.types) if (t.extensions.includes(ext)) return t.typePath;
    return undefined;
  }

  /** Whether a file of this name passes a listing filter (`machinecode`, `gcode`, `model`, `stl`…). */
  matchesFilter(name: string, filter: string): boolean {
    const tp = this.typePathOf(name);
    return tp !== undefined && tp.includes(filter);
  }
}
